// BootstrapImpl: connections, the pump, tagged messages, ring allGather (see bootstrap_peers.h).
#include "core/bootstrap_peers.h"

#include <poll.h>

#include "core/log.h"

namespace loom::bootstrap::detail {

namespace {
constexpr int32_t kTagAllGather = -1;
}  // namespace

bool BootstrapImpl::parseRoot(Conn* c) {
  if (c->in.size() < wire::kRootHeader) return true;
  uint32_t code = 0, len = 0;
  std::memcpy(&code, c->in.data() + 4 + wire::kKeyBytes, 4);
  std::memcpy(&len, c->in.data() + 8 + wire::kKeyBytes, 4);
  if (len > wire::kMaxHelloBody) return false;
  if (c->in.size() < wire::kRootHeader + len) return true;
  if (!rootDone_) {
    rootDone_ = true;
    rootCode_ = static_cast<Code>(code);
    rootBody_.assign(c->in.begin() + wire::kRootHeader, c->in.begin() + wire::kRootHeader + len);
  }
  c->in.clear();
  return true;
}

bool BootstrapImpl::parseFrames(Conn* c) {
  size_t at = 0;
  if (c->root) return parseRoot(c);
  if (!c->authed && c->in.size() >= 4 + wire::kKeyBytes) {
    uint32_t magic = 0;
    std::memcpy(&magic, c->in.data(), 4);
    if (magic == wire::kRootMagic && std::memcmp(c->in.data() + 4, key_, sizeof(key_)) == 0) {
      c->authed = c->root = true;
      return parseRoot(c);
    }
  }
  if (!c->authed) {
    if (c->in.size() < wire::kPeerHelloBytes) return true;
    uint32_t magic = 0;
    int32_t from = -1, to = -1;
    std::memcpy(&magic, c->in.data(), 4);
    std::memcpy(&from, c->in.data() + 4 + wire::kKeyBytes, 4);
    std::memcpy(&to, c->in.data() + 8 + wire::kKeyBytes, 4);
    if (magic != wire::kPeerMagic || std::memcmp(c->in.data() + 4, key_, sizeof(key_)) != 0 ||
        to != rank_ || from < 0 || from >= nranks_) {
      LOOM_WARN(INIT, "bootstrap rank ", rank_, ": refused connection from ", c->from.toString(),
                ": it did not present this job's key");
      return false;
    }
    c->authed = true;
    c->peer = from;
    inConnected_[from] = true;
    at = wire::kPeerHelloBytes;
  }
  while (c->in.size() - at >= wire::kFrameHeader) {
    int32_t tag = 0;
    uint64_t bytes = 0;
    std::memcpy(&tag, c->in.data() + at, 4);
    std::memcpy(&bytes, c->in.data() + at + 4, 8);
    if (c->in.size() - at - wire::kFrameHeader < bytes) break;
    const uint8_t* p = c->in.data() + at + wire::kFrameHeader;
    inbox_[c->peer].push_back(Msg{tag, std::vector<uint8_t>(p, p + bytes)});
    at += wire::kFrameHeader + bytes;
  }
  c->in.erase(c->in.begin(), c->in.begin() + at);
  return true;
}

void BootstrapImpl::readConn(Conn* c, bool* drop) {
  uint8_t buf[65536];
  for (;;) {
    size_t n = 0;
    Status s = net::tryRecv(c->fd.get(), buf, sizeof(buf), &n);
    if (!s.ok()) {
      if (c->root) {
        // The root closes after its message.
      } else if (!c->authed && !c->outgoing) {
        LOOM_WARN(INIT, "bootstrap rank ", rank_, ": refused connection from ", c->from.toString(),
                  ": closed before presenting the job key");
      } else if (c->outgoing) {
        outClosed_[c->peer] = true;
        sendConn_[c->peer] = nullptr;
      } else {
        inClosed_[c->peer] = true;
      }
      *drop = true;
      return;
    }
    if (n == 0) return;
    if (c->outgoing) continue;  // nothing expected on our own connections
    c->in.insert(c->in.end(), buf, buf + n);
    if (!parseFrames(c)) {
      *drop = true;
      return;
    }
  }
}

Status BootstrapImpl::pumpOnce(const Deadline& dl, const std::string& what, int waitPeer) {
  if (abort_ != nullptr && abort_->load(std::memory_order_relaxed)) {
    return net::abortedStatus(what);
  }
  if (dl.expired()) {
    return timeoutError(what, ": timed out after ", timeoutMs_, " ms waiting for ",
                        waitPeer >= 0 ? who(waitPeer) : std::string("peers"));
  }
  std::vector<pollfd> pfds;
  pfds.push_back({listen_.get(), POLLIN, 0});
  for (auto& c : conns_) {
    short ev = POLLIN;
    if (c->outSent < c->out.size()) ev |= POLLOUT;
    pfds.push_back({c->fd.get(), ev, 0});
  }
  int rc = poll(pfds.data(), pfds.size(), dl.pollMs(50));
  if (rc < 0 && errno != EINTR) return errnoStatus("bootstrap poll", errno);
  if (rc <= 0) return Status();
  for (size_t i = pfds.size(); i-- > 1;) {
    Conn* c = conns_[i - 1].get();
    bool drop = false;
    if ((pfds[i].revents & POLLOUT) != 0 && c->outSent < c->out.size()) {
      size_t n = 0;
      Status s =
          net::trySend(c->fd.get(), c->out.data() + c->outSent, c->out.size() - c->outSent, &n);
      if (!s.ok()) {
        outClosed_[c->peer] = true;
        sendConn_[c->peer] = nullptr;
        drop = true;
      }
      c->outSent += n;
      if (c->outSent == c->out.size()) {
        c->out.clear();
        c->outSent = 0;
      }
    }
    if (!drop && (pfds[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0) readConn(c, &drop);
    if (drop) conns_.erase(conns_.begin() + (i - 1));
  }
  if ((pfds[0].revents & POLLIN) != 0) {
    for (;;) {
      auto c = std::make_unique<Conn>();
      if (!net::acceptConn(listen_.get(), Deadline::afterMs(0), nullptr, &c->fd, &c->from).ok()) {
        break;
      }
      (void)net::setNoDelay(c->fd.get());
      conns_.push_back(std::move(c));
    }
  }
  return Status();
}

Status BootstrapImpl::ensureSendConn(int peer, const Deadline& dl) {
  if (sendConn_[peer] != nullptr) return Status();
  if (outClosed_[peer]) return remoteError(who(peer), " closed the connection");
  auto c = std::make_unique<Conn>();
  // Listen sockets exist before the table is sent, so a refused connection means a dead peer.
  Status s = net::connectTo(listenAddrs_[peer], dl, abort_, &c->fd, false);
  if (!s.ok()) {
    if (s.code() == Code::kRemoteError) outClosed_[peer] = true;
    return Status(s.code(), strCat("bootstrap rank ", rank_, ": connecting to ", who(peer), ": ",
                                   s.message()));
  }
  (void)net::setNoDelay(c->fd.get());
  c->outgoing = true;
  c->authed = true;
  c->peer = peer;
  wire::Writer w;
  w.put<uint32_t>(wire::kPeerMagic);
  w.bytes(key_, sizeof(key_));
  w.put<int32_t>(rank_);
  w.put<int32_t>(peer);
  c->out = std::move(w.buf);
  sendConn_[peer] = c.get();
  conns_.push_back(std::move(c));
  return Status();
}

Status BootstrapImpl::sendLocked(int peer, int32_t tag, const void* data, size_t bytes,
                                 const Deadline& dl, const std::string& what) {
  const auto* p = static_cast<const uint8_t*>(data);
  if (peer == rank_) {
    inbox_[rank_].push_back(Msg{tag, std::vector<uint8_t>(p, p + bytes)});
    return Status();
  }
  LOOM_CHECK(ensureSendConn(peer, dl));
  Conn* c = sendConn_[peer];
  wire::Writer w;
  w.put<int32_t>(tag);
  w.put<uint64_t>(bytes);
  c->out.insert(c->out.end(), w.buf.begin(), w.buf.end());
  c->out.insert(c->out.end(), p, p + bytes);
  while (sendConn_[peer] == c && c->outSent < c->out.size()) LOOM_CHECK(pumpOnce(dl, what, peer));
  if (sendConn_[peer] != c) return remoteError(what, ": ", who(peer), " closed the connection");
  return Status();
}

Status BootstrapImpl::recvLocked(int peer, int32_t tag, void* data, size_t bytes,
                                 const Deadline& dl, const std::string& what) {
  int strikes = 0;
  for (;;) {
    auto& box = inbox_[peer];
    for (auto it = box.begin(); it != box.end(); ++it) {
      if (it->tag != tag) continue;
      if (it->data.size() != bytes) {
        return invalidUsage(what, ": expected ", bytes, " bytes from ", who(peer), " but it sent ",
                            it->data.size());
      }
      if (bytes > 0) std::memcpy(data, it->data.data(), bytes);
      box.erase(it);
      return Status();
    }
    if (inClosed_[peer]) return remoteError(what, ": ", who(peer), " closed the connection");
    if (!inConnected_[peer] && peer != rank_) {
      // Nothing from the peer yet: keep a connection to it open so that its death is seen (the
      // connection is refused or closed) rather than waited out. Allow in-flight data to land.
      if (!outClosed_[peer]) (void)ensureSendConn(peer, dl);
      if (outClosed_[peer] && ++strikes > 3) {
        return remoteError(what, ": ", who(peer), " closed the connection");
      }
    }
    LOOM_CHECK(pumpOnce(dl, what, peer));
  }
}

Status BootstrapImpl::send(int peer, int tag, const void* data, size_t bytes) {
  if (peer < 0 || peer >= nranks_)
    return invalidArgument("bootstrap send: peer ", peer, " out of range");
  if (tag < 0) return invalidArgument("bootstrap send: tag ", tag, " must be >= 0");
  if (data == nullptr && bytes > 0) return invalidArgument("bootstrap send: data is NULL");
  std::lock_guard<std::mutex> g(mu_);
  return sendLocked(peer, tag, data, bytes, opDeadline(),
                    strCat("bootstrap send from rank ", rank_, " to rank ", peer, " tag ", tag));
}

Status BootstrapImpl::recv(int peer, int tag, void* data, size_t bytes) {
  if (peer < 0 || peer >= nranks_)
    return invalidArgument("bootstrap recv: peer ", peer, " out of range");
  if (tag < 0) return invalidArgument("bootstrap recv: tag ", tag, " must be >= 0");
  if (data == nullptr && bytes > 0) return invalidArgument("bootstrap recv: data is NULL");
  std::lock_guard<std::mutex> g(mu_);
  return recvLocked(peer, tag, data, bytes, opDeadline(),
                    strCat("bootstrap recv on rank ", rank_, " from rank ", peer, " tag ", tag));
}

Status BootstrapImpl::ringLocked(const std::vector<int>& ranks, int32_t tag, void* data,
                                 size_t bytesPerRank) {
  auto* base = static_cast<uint8_t*>(data);
  const int n = static_cast<int>(ranks.size());
  int me = -1;
  for (int i = 0; i < n; ++i)
    if (ranks[i] == rank_) me = i;
  if (me < 0) return internalError("bootstrap allGather: rank ", rank_, " is not in the group");
  const int next = ranks[(me + 1) % n], prev = ranks[(me + n - 1) % n];
  std::string what = strCat("bootstrap allGather on rank ", rank_);
  Deadline dl = opDeadline();
  for (int s = 0; s < n - 1; ++s) {
    int sendIdx = (me - s + n) % n;
    int recvIdx = (me - s - 1 + n) % n;
    LOOM_CHECK(sendLocked(next, tag, base + sendIdx * bytesPerRank, bytesPerRank, dl, what));
    LOOM_CHECK(recvLocked(prev, tag, base + recvIdx * bytesPerRank, bytesPerRank, dl, what));
  }
  return Status();
}

Status BootstrapImpl::allGather(void* data, size_t bytesPerRank) {
  if (data == nullptr && bytesPerRank > 0)
    return invalidArgument("bootstrap allGather: data is NULL");
  std::lock_guard<std::mutex> g(mu_);
  std::vector<int> all(nranks_);
  for (int i = 0; i < nranks_; ++i) all[i] = i;
  return ringLocked(all, kTagAllGather, data, bytesPerRank);
}

Status BootstrapImpl::allGatherSub(const std::vector<int>& ranks, int32_t tag, void* data,
                                   size_t bytesPerRank, const std::atomic<bool>* abort) {
  if (data == nullptr && bytesPerRank > 0)
    return invalidArgument("bootstrap allGather: data is NULL");
  if (tag >= kTagAllGather)
    return invalidArgument("bootstrap allGatherSub: tag ", tag, " must be < ", kTagAllGather);
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i] < 0 || ranks[i] >= nranks_ || (i > 0 && ranks[i] <= ranks[i - 1]))
      return invalidArgument("bootstrap allGatherSub: ranks must ascend within [0, ", nranks_, ")");
  std::lock_guard<std::mutex> g(mu_);
  const std::atomic<bool>* saved = abort_;
  abort_ = abort;
  Status st = ringLocked(ranks, tag, data, bytesPerRank);
  abort_ = saved;
  return st;
}

Status BootstrapImpl::barrier() {
  std::vector<uint8_t> dummy(nranks_, 0);
  return allGather(dummy.data(), 1);
}

Status BootstrapImpl::connectRing(const Deadline& dl) {
  if (nranks_ == 1) return Status();
  std::lock_guard<std::mutex> g(mu_);
  int next = (rank_ + 1) % nranks_, prev = (rank_ + nranks_ - 1) % nranks_;
  LOOM_CHECK(ensureSendConn(next, dl));
  std::string what = strCat("bootstrap ring setup on rank ", rank_);
  for (;;) {
    Conn* c = sendConn_[next];
    if (c == nullptr) return remoteError(what, ": ", who(next), " closed the connection");
    if (inConnected_[prev] && c->outSent == c->out.size()) break;
    LOOM_CHECK(pumpOnce(dl, what, inConnected_[prev] ? next : prev));
  }
  return Status();
}

// Waits for the root's message on our listen socket (peers that are already done may connect
// meanwhile; their connections are kept). On success *next gets the next rank's address.
Status BootstrapImpl::awaitRoot(const Deadline& dl, const std::string& root, int* next) {
  std::lock_guard<std::mutex> g(mu_);
  std::string what =
      strCat("bootstrap rank ", rank_, ": waiting for the rendezvous root at ", root);
  while (!rootDone_) {
    Status s = pumpOnce(dl, what, -1);
    if (s.code() == Code::kTimeout) {
      return timeoutError("bootstrap rank ", rank_, ": no answer from the rendezvous root at ",
                          root, " within ", timeoutMs_,
                          " ms (is the process that made the id alive?)");
    }
    LOOM_CHECK(s);
  }
  if (rootCode_ != Code::kOk)
    return Status(rootCode_, std::string(rootBody_.begin(), rootBody_.end()));
  std::string addr;
  wire::Reader r(rootBody_.data(), rootBody_.size());
  *next = (rank_ + 1) % nranks_;
  if (!r.str(&addr)) return internalError("bootstrap rank ", rank_, ": malformed root answer");
  return net::parseAddr(addr, &listenAddrs_[*next]);
}

// Every rank's identity and listen address, in fixed-size records over the ring.
Status BootstrapImpl::exchangeIdentities(const PeerIdentity& me, const std::string& listenAddr) {
  wire::Writer w;
  wire::putIdentity(&w, me, listenAddr);
  if (w.buf.size() > wire::kIdentitySlot) {
    return invalidArgument("bootstrap: identity of rank ", rank_, " (host ", me.hostname,
                           ") takes ", w.buf.size(), " bytes, more than ", wire::kIdentitySlot);
  }
  std::vector<uint8_t> all(nranks_ * wire::kIdentitySlot, 0);
  std::memcpy(all.data() + rank_ * wire::kIdentitySlot, w.buf.data(), w.buf.size());
  LOOM_CHECK(allGather(all.data(), wire::kIdentitySlot));
  std::vector<PeerIdentity> ids(nranks_);
  for (int i = 0; i < nranks_; ++i) {
    wire::Reader r(all.data() + i * wire::kIdentitySlot, wire::kIdentitySlot);
    std::string addr;
    if (!wire::getIdentity(&r, &ids[i], &addr) || ids[i].rank != i) {
      return internalError("bootstrap rank ", rank_, ": malformed identity record of rank ", i);
    }
    if (i != rank_) LOOM_CHECK(net::parseAddr(addr, &listenAddrs_[i]));
  }
  assignHostIndices(&ids);
  std::lock_guard<std::mutex> g(mu_);
  peers_ = std::move(ids);
  return Status();
}

}  // namespace loom::bootstrap::detail
