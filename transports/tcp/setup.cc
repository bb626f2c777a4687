// TCP transport setup. Collective: every rank listens on the address the bootstrap chose for it
// (if it has tcp peers), all gather {port, sockets, piece size, ok}, then each rank connects K
// sockets to every higher-ranked peer and accepts K from every lower-ranked one (connect() to a
// listening socket completes in the kernel without accept(), so this cannot deadlock). Every
// connection opens with a handshake carrying the communicator tag; the acceptor refuses (and
// logs) one that does not match and acknowledges the others, and the connector waits for the
// acknowledgements, so both ends know the mesh is complete when create returns.
#include <algorithm>
#include <cstring>
#include <map>

#include "core/log.h"
#include "core/params.h"
#include "transports/tcp/transport.h"

namespace loom::transport {
namespace {

using net::Deadline;
using net::Fd;
using tcp::TcpTransport;

constexpr uint32_t kMagic = 0x5043544c;  // "LTCP"
constexpr uint32_t kAck = 0x4b434154;    // "TACK"
constexpr uint32_t kMaxTag = 1024;
constexpr int64_t kHandshakeMs = 5000;

struct Slot {
  uint32_t port;
  uint32_t nsocks;
  uint32_t pieceBytes;
  uint32_t ok;
};

struct Hello {
  uint32_t magic;
  int32_t from;
  int32_t to;
  uint32_t index;
  uint32_t tagLen;
};

Status connectPeer(const SetupArgs& a, int peer, const Slot& slot, int k, const Deadline& dl,
                   std::vector<Fd>* socks) {
  net::SockAddr addr;
  LOOM_CHECK(net::parseHost(a.ids[peer].address, static_cast<int>(slot.port), &addr));
  for (int i = 0; i < k; ++i) {
    Fd fd;
    Status s = net::connectTo(addr, dl, a.abortFlag, &fd);
    if (!s.ok()) {
      return Status(s.code(), strCat("tcp setup on rank ", a.rank, ": connecting socket ", i,
                                     " to peer ", a.ids[peer].describe(), ": ", s.message()));
    }
    LOOM_CHECK(net::setNoDelay(fd.get()));
    Hello h{kMagic, a.rank, peer, static_cast<uint32_t>(i),
            static_cast<uint32_t>(a.commTag.size())};
    std::string msg(reinterpret_cast<const char*>(&h), sizeof(h));
    msg += a.commTag;
    LOOM_CHECK(net::sendAll(fd.get(), msg.data(), msg.size(), dl, a.abortFlag));
    socks->push_back(std::move(fd));
  }
  return Status();
}

// Reads and checks one handshake; returns false (after logging) for a connection to refuse.
bool readHello(const SetupArgs& a, int fd, const net::SockAddr& from, const Deadline& dl,
               Hello* h) {
  Deadline hd = Deadline::afterMs(kHandshakeMs);
  const Deadline& use = dl.endNs() >= 0 && dl.endNs() < hd.endNs() ? dl : hd;
  std::string why;
  std::string tag;
  if (!net::recvAll(fd, h, sizeof(*h), use, a.abortFlag).ok()) {
    why = "no complete handshake";
  } else if (h->magic != kMagic || h->tagLen > kMaxTag) {
    why = "not a loom tcp handshake";
  } else {
    tag.resize(h->tagLen);
    if (!net::recvAll(fd, tag.data(), tag.size(), use, a.abortFlag).ok() || tag != a.commTag) {
      why = "wrong communicator token";
    } else if (h->to != a.rank || h->from < 0 || h->from >= a.rank) {
      why = strCat("unexpected ranks ", h->from, " -> ", h->to);
    }
  }
  if (why.empty()) return true;
  LOOM_WARN(NET, "tcp setup on rank ", a.rank, ": refused connection from ", from.toString(), ": ",
            why);
  return false;
}

std::string missingList(const std::map<int, std::vector<Fd>>& got, const std::map<int, int>& want) {
  std::string out;
  for (const auto& [peer, k] : want) {
    auto it = got.find(peer);
    size_t have = 0;
    if (it != got.end()) {
      for (const auto& fd : it->second) have += fd.valid() ? 1 : 0;
    }
    if (static_cast<int>(have) < k) out += strCat(out.empty() ? "" : ", ", peer);
  }
  return out;
}

Status acceptPeers(const SetupArgs& a, int listenFd, const std::map<int, int>& want,
                   const Deadline& dl, std::map<int, std::vector<Fd>>* got) {
  size_t expected = 0;
  for (const auto& [peer, k] : want) {
    expected += k;
    (*got)[peer].resize(k);
  }
  for (size_t have = 0; have < expected;) {
    Fd fd;
    net::SockAddr from;
    Status s = net::acceptConn(listenFd, dl, a.abortFlag, &fd, &from);
    if (s.code() == Code::kTimeout) {
      return timeoutError("tcp setup on rank ", a.rank, ": timed out after ", a.timeoutMs,
                          " ms waiting for connections from ranks ", missingList(*got, want));
    }
    LOOM_CHECK(s);
    Hello h{};
    if (!readHello(a, fd.get(), from, dl, &h)) continue;
    auto w = want.find(h.from);
    if (w == want.end() || static_cast<int>(h.index) >= w->second ||
        (*got)[h.from][h.index].valid()) {
      LOOM_WARN(NET, "tcp setup on rank ", a.rank, ": refused connection from ", from.toString(),
                ": rank ", h.from, " socket ", h.index, " not expected");
      continue;
    }
    LOOM_CHECK(net::setNoDelay(fd.get()));
    uint32_t ack = kAck;
    LOOM_CHECK(net::sendAll(fd.get(), &ack, sizeof(ack), dl, a.abortFlag));
    (*got)[h.from][h.index] = std::move(fd);
    ++have;
  }
  return Status();
}

Status setup(const SetupArgs& a, std::unique_ptr<Transport>* out) {
  Deadline dl = Deadline::afterMs(a.timeoutMs > 0 ? a.timeoutMs : -1);
  int64_t nsocks = std::clamp<int64_t>(params::tcpSocketsPerPeer(), 1, 64);
  int64_t piece = std::clamp<int64_t>(params::tcpPieceBytes(), 4096, 1 << 30) / 4096 * 4096;
  Fd listen;
  Status local;
  net::SockAddr bound;
  if (!a.peers.empty()) {
    net::SockAddr addr;
    local = net::parseHost(a.ids[a.rank].address, 0, &addr);
    if (local.ok()) local = net::listenOn(addr, 1024, &listen, &bound);
  }
  std::vector<Slot> slots(a.nranks);
  slots[a.rank] =
      Slot{static_cast<uint32_t>(bound.valid() ? bound.port() : 0), static_cast<uint32_t>(nsocks),
           static_cast<uint32_t>(piece), local.ok() ? 1u : 0u};
  Status g = a.allGather(slots.data(), sizeof(Slot));
  if (!local.ok())
    return Status(local.code(), strCat("tcp setup on rank ", a.rank, ": ", local.message()));
  if (!g.ok()) return Status(g.code(), strCat("tcp setup on rank ", a.rank, ": ", g.message()));

  std::map<int, int> want;  // lower peers -> sockets expected
  std::vector<TcpTransport::PeerConfig> peers;
  std::map<int, std::vector<Fd>> accepted;
  for (int p : a.peers) {
    const Slot& sl = slots[p];
    if (!sl.ok)
      return remoteError("tcp setup failed on peer ", a.ids[p].describe(), "; see its log");
    if (sl.port == 0) {
      return invalidUsage("tcp setup on rank ", a.rank, ": peer ", a.ids[p].describe(),
                          " does not use tcp towards this rank");
    }
    TcpTransport::PeerConfig pc;
    pc.rank = p;
    pc.id = a.ids[p];
    pc.pieceBytes = std::min<uint32_t>(sl.pieceBytes, static_cast<uint32_t>(piece));
    int k = static_cast<int>(std::min<uint32_t>(sl.nsocks, static_cast<uint32_t>(nsocks)));
    if (p > a.rank) {
      LOOM_CHECK(connectPeer(a, p, sl, k, dl, &pc.socks));
    } else {
      want[p] = k;
    }
    peers.push_back(std::move(pc));
  }
  if (!want.empty()) LOOM_CHECK(acceptPeers(a, listen.get(), want, dl, &accepted));
  for (auto& pc : peers) {
    if (pc.rank < a.rank) {
      pc.socks = std::move(accepted[pc.rank]);
      continue;
    }
    for (auto& fd : pc.socks) {
      uint32_t ack = 0;
      Status s = net::recvAll(fd.get(), &ack, sizeof(ack), dl, a.abortFlag);
      if (s.ok() && ack != kAck) s = remoteError("bad acknowledgement");
      if (!s.ok()) {
        return Status(s.code(), strCat("tcp setup on rank ", a.rank, ": peer ", pc.id.describe(),
                                       " did not accept our connection: ", s.message()));
      }
    }
  }
  LOOM_INFO(NET, "tcp transport on rank ", a.rank, ": ", peers.size(), " peers, ", nsocks,
            " sockets each, pieces of ", piece, " bytes");
  auto t = std::make_unique<TcpTransport>(a.rank, a.ids[a.rank], std::move(peers), a.nranks);
  LOOM_CHECK(t->initWakeFd());
  t->setChecksum(params::checksum() != 0);
  *out = std::move(t);
  return Status();
}

}  // namespace

Status createTcpTransport(const SetupArgs& args, std::unique_ptr<Transport>* out) {
  if (out == nullptr) return invalidArgument("createTcpTransport: out is NULL");
  if (args.rank < 0 || args.rank >= args.nranks ||
      static_cast<int>(args.ids.size()) != args.nranks || !args.allGather) {
    return invalidArgument("createTcpTransport: rank ", args.rank, ", nranks ", args.nranks, ", ",
                           args.ids.size(), " identities or allGather missing");
  }
  for (int p : args.peers) {
    if (p < 0 || p >= args.nranks || p == args.rank) {
      return invalidArgument("createTcpTransport: bad peer ", p, " on rank ", args.rank);
    }
  }
  return setup(args, out);
}

}  // namespace loom::transport
