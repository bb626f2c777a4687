// TCP transport data path (see transport.h for the wire format and threading).
#include "transports/tcp/transport.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "core/log.h"
#include "kernels/crc32c.h"
#include "kernels/reduce.h"

namespace loom::transport::tcp {
namespace {

constexpr size_t kBudgetBytes = 16u << 20;  // per socket per progress() call, for fairness
constexpr size_t kStagingBytes = 64u << 10;
constexpr uint32_t kHdr = sizeof(PieceHeader);

}  // namespace

TcpTransport::TcpTransport(int rank, PeerIdentity self, std::vector<PeerConfig> peers, int nranks)
    : rank_(rank), nranks_(nranks), self_(std::move(self)), index_(nranks, -1) {
  for (auto& pc : peers) {
    index_[pc.rank] = static_cast<int>(peers_.size());
    peers_.emplace_back();
    Peer& p = peers_.back();
    p.rank = pc.rank;
    p.id = pc.id;
    p.P = pc.pieceBytes;
    p.socks = std::move(pc.socks);
    size_t k = p.socks.size();
    p.staging.resize(k);
    p.fill.assign(k, 0);
    p.out.cur.resize(k);
    p.in.cur.resize(k);
    for (size_t s = 0; s < k; ++s) p.out.cur[s].g = p.in.cur[s].g = s;
  }
}

Status TcpTransport::initWakeFd() {
  wakeFd_.reset(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wakeFd_.valid()) return errnoStatus("tcp transport: eventfd", errno);
  return Status();
}

Capabilities TcpTransport::caps() const {
  Capabilities c;
  c.name = "tcp";
  c.bandwidthGBs = kBandwidthGBs;
  c.latencyUs = kLatencyUs;
  c.gpuDirect = false;
  c.intraNode = false;
  return c;
}

Status TcpTransport::peerError(const Peer& p, const Status& s) {
  if (s.code() == Code::kRemoteError) {
    error_ = remoteError("peer ", p.id.describe(), " closed the connection (", s.message(), ")");
  } else {
    error_ = Status(s.code(), strCat("tcp transport, peer ", p.id.describe(), ": ", s.message()));
  }
  LOOM_WARN(NET, error_.message());
  return error_;
}

Status TcpTransport::post(int peer, Request* req) {
  if (!error_.ok()) return error_;
  if (peer < 0 || peer >= nranks_ || index_[peer] < 0) {
    return invalidArgument("tcp post: peer ", peer, " is not served by this transport");
  }
  if (req == nullptr) return invalidArgument("tcp post: request is NULL");
  Peer& p = peers_[index_[peer]];
  bool send = req->kind == Request::kSend;
  if (req->bytes > 0 && (send ? req->src == nullptr : req->dst == nullptr)) {
    return invalidArgument("tcp post: ", send ? "src" : "dst", " is NULL for ", req->bytes,
                           " bytes (peer ", peer, ")");
  }
  if (!send && req->operand != nullptr) {
    if (!validDataType(static_cast<int>(req->dtype)) || !validRedOp(static_cast<int>(req->op))) {
      return invalidArgument("tcp post: bad dtype/op for a reducing receive from peer ", peer);
    }
    size_t esz = dtypeSize(req->dtype);
    if (req->bytes % esz != 0) {
      return invalidArgument("tcp post: reducing receive of ", req->bytes,
                             " bytes is not a whole number of ", dtypeName(req->dtype),
                             " elements (peer ", peer, ")");
    }
    for (size_t s = 0; s < p.socks.size(); ++s) {
      if (p.staging[s].empty()) p.staging[s].resize(std::min<size_t>(kStagingBytes, p.P));
    }
  }
  Stream& st = send ? p.out : p.in;
  uint64_t npieces = req->bytes == 0 ? 1 : (req->bytes + p.P - 1) / p.P;
  req->doneBytes = 0;
  req->complete = false;
  st.q.push_back(Item{req, st.nextSeq++, st.nextPiece, npieces});
  st.nextPiece += npieces;
  return Status();
}

TcpTransport::Item* TcpTransport::locate(Stream& st, Cursor& c) {
  if (c.item < st.base) c.item = st.base;
  while (c.item - st.base < st.q.size()) {
    Item& it = st.q[c.item - st.base];
    if (c.g < it.first + it.npieces) return c.g >= it.first ? &it : nullptr;
    ++c.item;
  }
  return nullptr;
}

uint64_t TcpTransport::pieceLen(const Peer& p, const Item& it, uint64_t k) const {
  uint64_t bytes = it.req->bytes;
  return bytes == 0 ? 0 : std::min<uint64_t>(p.P, bytes - k * p.P);
}

Status TcpTransport::pumpSend(Peer& p, size_t s, bool* moved) {
  Cursor& c = p.out.cur[s];
  int fd = p.socks[s].get();
  size_t budget = kBudgetBytes;
  while (budget > 0) {
    Item* it = locate(p.out, c);
    if (it == nullptr) return Status();
    uint64_t k = c.g - it->first;
    uint64_t len = pieceLen(p, *it, k);
    if (c.hdrDone == 0 && c.off == 0) startPiece(p, c, *it, k, len);
    iovec iov[2];
    int n = 0;
    if (c.hdrDone < kHdr) {
      iov[n++] = {reinterpret_cast<uint8_t*>(&c.hdr) + c.hdrDone, kHdr - c.hdrDone};
    }
    if (c.off < len) {
      const uint8_t* from = c.from ? c.from : it->req->src + k * p.P;
      iov[n++] = {const_cast<uint8_t*>(from) + c.off, len - c.off};
    }
    msghdr m{};
    m.msg_iov = iov;
    m.msg_iovlen = n;
    ssize_t r = sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Status();
      if (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN) {
        return peerError(p, remoteError(std::strerror(errno)));
      }
      return peerError(p, errnoStatus("sendmsg", errno));
    }
    *moved = true;
    size_t moved_bytes = static_cast<size_t>(r);
    budget -= std::min(budget, moved_bytes);
    uint32_t h = static_cast<uint32_t>(std::min<size_t>(moved_bytes, kHdr - c.hdrDone));
    c.hdrDone += h;
    c.off += moved_bytes - h;
    if (c.hdrDone == kHdr && c.off == len) {
      c.g += p.socks.size();
      c.hdrDone = 0;
      c.off = 0;
      c.from = nullptr;
    }
  }
  return Status();
}

Status TcpTransport::receivePiece(Peer& p, size_t s, Item& it, bool* pieceDone,
                                  size_t* movedBytes) {
  Cursor& c = p.in.cur[s];
  Request* req = it.req;
  uint64_t k = c.g - it.first;
  uint64_t len = pieceLen(p, it, k);
  uint64_t base = k * p.P;
  iovec iov[2];
  int n = 0;
  if (c.hdrDone < kHdr)
    iov[n++] = {reinterpret_cast<uint8_t*>(&c.hdr) + c.hdrDone, kHdr - c.hdrDone};
  if (c.off < len) {
    if (req->operand == nullptr) {
      iov[n++] = {req->dst + base + c.off, len - c.off};
    } else {
      size_t room = p.staging[s].size() - p.fill[s];
      iov[n++] = {p.staging[s].data() + p.fill[s], std::min<uint64_t>(room, len - c.off)};
    }
  }
  msghdr m{};
  m.msg_iov = iov;
  m.msg_iovlen = n;
  ssize_t r = recvmsg(p.socks[s].get(), &m, MSG_DONTWAIT);
  *movedBytes = 0;
  *pieceDone = false;
  if (r == 0) return peerError(p, remoteError("end of stream"));
  if (r < 0) {
    if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) return Status();
    if (errno == ECONNRESET || errno == ENOTCONN || errno == ETIMEDOUT) {
      return peerError(p, remoteError(std::strerror(errno)));
    }
    return peerError(p, errnoStatus("recvmsg", errno));
  }
  size_t got = static_cast<size_t>(r);
  *movedBytes = got;
  uint32_t h = static_cast<uint32_t>(std::min<size_t>(got, kHdr - c.hdrDone));
  c.hdrDone += h;
  if (h > 0 && c.hdrDone == kHdr) {
    if (c.hdr.seq == kPoisonMark && c.hdr.piece == kPoisonMark) {
      const uint8_t* at =
          req->operand == nullptr ? req->dst + base + c.off : p.staging[s].data() + p.fill[s];
      return poisoned(p, s, at, got - h);
    }
    if (req->call && !sameCall(*req->call, c.hdr.call)) {
      const CallDesc& mine = c.hdr.call.seq == lastCall_.seq ? lastCall_ : *req->call;
      error_ = callMismatch(
          rank_, mine, p.rank, c.hdr.call,
          strCat("rank ", rank_, " receiving from rank ", p.rank, " over tcp").c_str());
      LOOM_WARN(NET, error_.message());
      return error_;
    }
    if (c.hdr.bytes != req->bytes) {
      error_ = invalidUsage("tcp: message #", it.seq, " from peer ", p.id.describe(), " has ",
                            c.hdr.bytes, " bytes but this rank posted a receive of ", req->bytes,
                            " bytes");
      LOOM_WARN(NET, error_.message());
      return error_;
    }
    if (c.hdr.seq != static_cast<uint32_t>(it.seq) || c.hdr.piece != k) {
      error_ = internalError("tcp: stream from peer ", p.id.describe(),
                             " out of sync (got message ", c.hdr.seq, " piece ", c.hdr.piece,
                             ", expected ", it.seq, " piece ", k, ")");
      return error_;
    }
  }
  size_t payload = got - h;
  if ((c.hdr.flags & kPieceCrc) != 0 && payload > 0) {
    const uint8_t* at =
        req->operand == nullptr ? req->dst + base + c.off : p.staging[s].data() + p.fill[s];
    c.crc = kernels::crc32c(c.crc, at, payload);
  }
  c.off += payload;
  if (req->operand != nullptr && payload > 0) {
    size_t esz = dtypeSize(req->dtype);
    size_t& fill = p.fill[s];
    fill += payload;
    size_t whole = fill / esz * esz;
    if (whole > 0) {
      uint64_t at = base + c.off - fill;
      kernels::reduce(req->dst + at, req->operand + at, p.staging[s].data(), whole / esz,
                      req->dtype, req->op);
      std::memmove(p.staging[s].data(), p.staging[s].data() + whole, fill - whole);
      fill -= whole;
    }
  }
  *pieceDone = c.hdrDone == kHdr && c.off == len;
  if (*pieceDone) return checkPiece(p, c, it);
  return Status();
}

Status TcpTransport::pumpRecv(Peer& p, size_t s, bool* moved) {
  Cursor& c = p.in.cur[s];
  size_t budget = kBudgetBytes;
  while (budget > 0) {
    Item* it = locate(p.in, c);
    if (it == nullptr) return Status();
    bool done = false;
    size_t n = 0;
    LOOM_CHECK(receivePiece(p, s, *it, &done, &n));
    if (n == 0) return Status();
    *moved = true;
    budget -= std::min(budget, n);
    if (done) {
      c.g += p.socks.size();
      c.hdrDone = 0;
      c.off = 0;
      c.crc = 0;
    }
  }
  return Status();
}

// Completes front requests whose pieces are all done (in FIFO order) and updates doneBytes to
// the contiguous prefix moved so far.
void TcpTransport::settle(Peer& p, Stream& st, bool recv) {
  const uint64_t K = p.socks.size();
  while (!st.q.empty()) {
    Item& it = st.q.front();
    uint64_t end = it.first + it.npieces;
    uint64_t prefix = it.req->bytes;
    bool all = true;
    for (uint64_t s = 0; s < K; ++s) {
      const Cursor& c = st.cur[s];
      uint64_t g = c.g;
      if (g < it.first) g = it.first + (s + K - it.first % K) % K;
      if (g >= end) continue;
      all = false;
      uint64_t eff = c.g == g ? c.off - (recv ? p.fill[s] : 0) : 0;
      prefix = std::min(prefix, (g - it.first) * p.P + eff);
    }
    if (!all) {
      it.req->doneBytes = prefix;
      return;
    }
    it.req->doneBytes = it.req->bytes;
    it.req->complete = true;
    st.q.pop_front();
    ++st.base;
  }
}

Status TcpTransport::progress(bool* progressed) {
  *progressed = false;
  if (!error_.ok()) return error_;
  for (Peer& p : peers_) {
    for (size_t s = 0; s < p.socks.size(); ++s) {
      LOOM_CHECK(pumpSend(p, s, progressed));
      LOOM_CHECK(pumpRecv(p, s, progressed));
    }
    settle(p, p.out, false);
    settle(p, p.in, true);
  }
  return Status();
}

// The wake-up eventfd, then every socket with queued work in the direction it waits for.
void TcpTransport::addPollFds(std::vector<pollfd>* fds) {
  fds->push_back({wakeFd_.get(), POLLIN, 0});
  for (Peer& p : peers_) {
    for (size_t s = 0; s < p.socks.size(); ++s) {
      short ev = 0;
      if (locate(p.out, p.out.cur[s]) != nullptr) ev |= POLLOUT;
      if (locate(p.in, p.in.cur[s]) != nullptr) ev |= POLLIN;
      if (ev != 0) fds->push_back({p.socks[s].get(), ev, 0});
    }
  }
}

void TcpTransport::drainWake() {
  uint64_t v;
  ssize_t k = read(wakeFd_.get(), &v, sizeof(v));
  (void)k;
}

Status TcpTransport::wait(int64_t timeoutUs) {
  if (!error_.ok()) return error_;
  pollFds_.clear();
  addPollFds(&pollFds_);
  timespec ts;
  if (timeoutUs < 0) timeoutUs = 0;
  ts.tv_sec = timeoutUs / 1000000;
  ts.tv_nsec = (timeoutUs % 1000000) * 1000;
  int rc = ppoll(pollFds_.data(), pollFds_.size(), &ts, nullptr);
  if (rc < 0 && errno != EINTR) return errnoStatus("tcp transport: poll", errno);
  if (rc > 0 && (pollFds_[0].revents & POLLIN) != 0) drainWake();
  return Status();
}

bool TcpTransport::armPoll(std::vector<pollfd>* fds) {
  if (!error_.ok()) return false;  // progress() reports it
  addPollFds(fds);
  return true;
}

void TcpTransport::disarmPoll() { drainWake(); }

Status TcpTransport::checkPeers() {
  if (!error_.ok()) return error_;
  for (Peer& p : peers_) {
    if (p.out.q.empty() && p.in.q.empty()) continue;  // a peer we do not need may have left
    if (p.id.sameHostAs(self_) && processGone(p.id.pid)) {
      error_ = remoteError("peer ", p.id.describe(), " died (process gone)");
      LOOM_WARN(NET, error_.message());
      return error_;
    }
    for (auto& fd : p.socks) {
      pollfd pf{fd.get(), POLLRDHUP, 0};
      if (poll(&pf, 1, 0) <= 0 || (pf.revents & (POLLRDHUP | POLLHUP | POLLERR)) == 0) continue;
      int unread = 0;
      if (ioctl(fd.get(), FIONREAD, &unread) == 0 && unread > 0 && !p.in.q.empty()) continue;
      return peerError(p, remoteError("hang-up seen by checkPeers"));
    }
  }
  return Status();
}

void TcpTransport::wake() {
  uint64_t one = 1;
  ssize_t k = write(wakeFd_.get(), &one, sizeof(one));
  (void)k;
}

}  // namespace loom::transport::tcp
