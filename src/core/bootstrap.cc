// Bootstrap, rank side: create(). The rank connects to the root service (bootstrap_root.cc),
// listens where that route leaves this host (or on LOOM_SOCKET_IFNAME), says hello, and waits on
// its listen socket for the root's answer: the next rank's address, or why the rendezvous failed
// (e.g. which ranks never arrived). It then connects the ring (each rank to the next; the
// previous one connects to it, so a dead neighbour is seen at once) and allGathers every rank's
// identity and listen address over it. Messaging after that lives in bootstrap_peers.cc.
#include "core/bootstrap.h"

#include "core/bootstrap_peers.h"
#include "core/log.h"
#include "core/params.h"

namespace loom::bootstrap {
namespace {

using detail::BootstrapImpl;
using net::Deadline;
using net::Fd;

constexpr int64_t kRootGraceMs = 2000;

Status sendHello(const wire::UniqueId& uid, int rank, int nranks, int64_t timeoutMs,
                 int64_t startNs, const Deadline& dl, const std::atomic<bool>* abort,
                 const PeerIdentity& me, const std::string& listenAddr, int rootFd) {
  wire::Writer body;
  body.put<int32_t>(rank);
  body.put<int32_t>(nranks);
  body.put<int64_t>(timeoutMs);
  body.put<int64_t>((net::nowNs() - startNs) / 1000000);
  wire::putIdentity(&body, me, listenAddr);
  wire::Writer w;
  w.put<uint32_t>(wire::kHelloMagic);
  w.bytes(uid.key, wire::kKeyBytes);
  w.put<uint32_t>(static_cast<uint32_t>(body.buf.size()));
  w.bytes(body.buf.data(), body.buf.size());
  Status s = net::sendAll(rootFd, w.buf.data(), w.buf.size(), dl, abort);
  if (!s.ok()) {
    return Status(s.code(), strCat("bootstrap rank ", rank, ": hello to the rendezvous root at ",
                                   uid.root.toString(), ": ", s.message()));
  }
  return Status();
}

}  // namespace

Status Bootstrap::create(const char* id, int rank, int nranks, int64_t timeoutMs,
                         const std::atomic<bool>* abort, std::unique_ptr<Bootstrap>* out) {
  if (id == nullptr) return invalidArgument("bootstrap: unique id is NULL");
  if (out == nullptr) return invalidArgument("bootstrap: out is NULL");
  if (nranks <= 0) return invalidArgument("bootstrap: nranks ", nranks, " must be > 0");
  if (rank < 0 || rank >= nranks) {
    return invalidArgument("bootstrap: rank ", rank, " outside 0..", nranks - 1);
  }
  int64_t startNs = net::nowNs();
  Deadline dl = Deadline::afterMs(timeoutMs > 0 ? timeoutMs : -1);
  wire::UniqueId uid;
  LOOM_CHECK(wire::decodeId(id, &uid));

  Fd rootFd;
  // The root listens before makeUniqueId returns, so a refused connection means it is gone: the
  // id already served a communicator, or the process that made it exited. Say so at once.
  Status s = net::connectTo(uid.root, dl, abort, &rootFd, false);
  if (s.code() == Code::kRemoteError) {
    return remoteError("bootstrap rank ", rank, ": the rendezvous root at ", uid.root.toString(),
                       " refused the connection: this unique id was already used by a "
                       "communicator that formed, or the process that made it has exited (every "
                       "communicator needs a fresh id from loomGetUniqueId)");
  }
  if (!s.ok()) {
    return Status(s.code(),
                  strCat("bootstrap rank ", rank, ": could not reach the rendezvous root ",
                         "(the process that made the unique id): ", s.message()));
  }
  // Listen where the route to the root leaves this host, unless LOOM_SOCKET_IFNAME says where.
  net::SockAddr mine;
  if (!params::socketIfname().empty()) {
    net::Interface itf;
    LOOM_CHECK(net::chooseInterface(&itf));
    mine = itf.addr;
  } else {
    LOOM_CHECK(net::localAddr(rootFd.get(), &mine));
    mine.setPort(0);
  }
  Fd listen;
  net::SockAddr bound;
  LOOM_CHECK(net::listenOn(mine, 1024, &listen, &bound));
  PeerIdentity me = localIdentity();
  me.rank = rank;
  me.address = bound.host();
  auto impl =
      std::make_unique<BootstrapImpl>(rank, nranks, timeoutMs, abort, uid.key, std::move(listen));
  impl->peers_.resize(nranks);
  impl->listenAddrs_.resize(nranks);
  impl->listenAddrs_[rank] = bound;
  LOOM_CHECK(sendHello(uid, rank, nranks, timeoutMs, startNs, dl, abort, me, bound.toString(),
                       rootFd.get()));
  int next = 0;
  LOOM_CHECK(impl->awaitRoot(Deadline::afterMs(timeoutMs > 0 ? timeoutMs + kRootGraceMs : -1),
                             uid.root.toString(), &next));
  rootFd.reset();
  LOOM_CHECK(impl->connectRing(dl));
  LOOM_CHECK(impl->exchangeIdentities(me, bound.toString()));
  LOOM_INFO(INIT, "bootstrap rank ", rank, "/", nranks, " ready, listening on ", bound.toString());
  *out = std::move(impl);
  return Status();
}

}  // namespace loom::bootstrap
