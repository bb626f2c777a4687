// Data path of the shm transport: post, progress (pump rings), wait (doorbell futex), liveness.
#include "transports/shm/transport.h"

#include <sched.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "core/futex.h"
#include "kernels/crc32c.h"
#include "kernels/reduce.h"

namespace loom::transport::shm {
namespace {

// Copy granularity: a slice is published as soon as it is copied, so the two sides overlap.
constexpr uint64_t kSliceBytes = 256 << 10;

using Clock = std::chrono::steady_clock;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// A byte to a wake-up FIFO; a full FIFO already holds a wake-up, so EAGAIN is fine.
void ringBell(const net::Fd& fd) {
  if (!fd.valid()) return;
  const char c = 1;
  ssize_t k = write(fd.get(), &c, 1);
  (void)k;
}

}  // namespace

Capabilities ShmTransport::caps() const {
  Capabilities c;
  c.name = "shm";
  c.bandwidthGBs = kBandwidthGBs;
  c.latencyUs = kLatencyUs;
  c.gpuDirect = false;
  c.intraNode = true;
  return c;
}

Status ShmTransport::post(int peer, Request* req) {
  if (!req) return invalidArgument("shm post: req is null");
  if (peer < 0 || peer >= nranks_ || peerIndex_[peer] < 0)
    return invalidArgument("shm post: rank ", peer, " is not a shm peer of rank ", rank_);
  if (req->kind == Request::kSend && req->bytes > 0 && !req->src)
    return invalidArgument("shm post: send of ", req->bytes, " bytes to rank ", peer,
                           " has null src");
  if (req->kind == Request::kRecv) {
    if (req->bytes > 0 && !req->dst)
      return invalidArgument("shm post: receive of ", req->bytes, " bytes from rank ", peer,
                             " has null dst");
    if (req->operand && req->bytes % dtypeSize(req->dtype) != 0)
      return invalidArgument("shm post: reducing receive from rank ", peer, " of ", req->bytes,
                             " bytes is not a whole number of ", dtypeName(req->dtype));
  }
  if (!faultClosed_.empty() && faultClosed_[peer])
    return remoteError("shm: the connection from rank ", rank_, " to rank ", peer,
                       " was closed (LOOM_FAULT=close)");
  req->doneBytes = 0;
  req->complete = false;
  Peer& p = peers_[peerIndex_[peer]];
  (req->kind == Request::kSend ? p.sends : p.recvs).push_back(req);
  return Status();
}

bool ShmTransport::pumpSends(Peer& p) {
  const uint64_t ring = p.sendRingBytes;
  bool moved = false;
  // Free bytes as far as we know; re-reads the receiver's tail only when that is not enough.
  // (The tail never passes our head: the receiver skips a message's padding only after we moved
  // our private head past it.)
  auto freeBytes = [&](uint64_t need) -> uint64_t {
    if (p.sendTailSeen + ring < p.sendHead + need)
      p.sendTailSeen = p.sendCtr->tail.load(std::memory_order_acquire);
    uint64_t used = p.sendHead - std::min(p.sendTailSeen, p.sendHead);
    return used >= ring ? 0 : ring - used;
  };
  while (!p.sends.empty()) {
    Request* r = p.sends.front();
    const bool single = p.cmaSend && r->bytes >= cmaThreshold_;
    if (!p.sendStarted) {
      if (freeBytes(kSlot) < kSlot) break;
      rewindIfEmpty(p);
      auto* h = reinterpret_cast<MessageHeader*>(p.sendData + p.sendHead % ring);
      h->magic = kMessageMagic;
      h->flags = single ? kFlagCma : 0;
      h->seq = p.sendSeq++;
      h->bytes = r->bytes;
      h->addr = single ? reinterpret_cast<uint64_t>(r->src) : 0;
      h->call = r->call ? *r->call : CallDesc{};
      if (checksum_ && !single) {
        h->flags |= kFlagCrc;
        h->crc = kernels::crc32c(0, r->src, r->bytes);
      }
      p.sendHead += kSlot;
      p.sendStarted = moved = true;
      p.sendCtr->head.store(p.sendHead, std::memory_order_release);
    }
    if (single) {  // the receiver reads r->src itself; complete once it acknowledges
      p.unacked.push_back({r, ++p.cmaSent});
      p.sends.pop_front();
      p.sendStarted = false;
      continue;
    }
    while (r->doneBytes < r->bytes) {
      uint64_t left = r->bytes - r->doneBytes;
      uint64_t pos = p.sendHead % ring;
      uint64_t n =
          std::min({left, freeBytes(std::min(left, kSliceBytes)), ring - pos, kSliceBytes});
      // Only a message's last piece may end off a slot boundary (keeps elements whole for the
      // receiver's reduction and the head slot-aligned).
      if (n < left) n -= n % kSlot;
      if (n == 0) break;
      std::memcpy(p.sendData + pos, r->src + r->doneBytes, n);
      if (flipArmed_ && (flipPeer_ < 0 || flipPeer_ == p.rank)) {  // LOOM_FAULT=flip
        p.sendData[pos] ^= 1;
        flipArmed_ = false;
      }
      p.sendHead += n;
      r->doneBytes += n;
      moved = true;
      p.sendCtr->head.store(p.sendHead, std::memory_order_release);
      notifyPeer(p);
    }
    if (r->doneBytes < r->bytes) break;
    // Padding to the next slot is never written; it only moves the cursor.
    p.sendHead = alignUp(p.sendHead, kSlot);
    p.sendCtr->head.store(p.sendHead, std::memory_order_release);
    if (p.unacked.empty()) {
      r->complete = true;
    } else {
      p.unacked.push_back({r, 0});  // completes after the single-copy sends before it
    }
    p.sends.pop_front();
    p.sendStarted = false;
  }
  return moved;
}

// At a message's start: with the cursor kRewindBytes or more into the ring and the ring empty, a
// rewind header here and the cursor to the ring's start (transport.h, "Rewinding").
void ShmTransport::rewindIfEmpty(Peer& p) {
  const uint64_t ring = p.sendRingBytes;
  const uint64_t pos = p.sendHead % ring;
  if (pos < kRewindBytes) return;
  if (p.sendTailSeen != p.sendHead)
    p.sendTailSeen = p.sendCtr->tail.load(std::memory_order_acquire);
  if (p.sendTailSeen != p.sendHead) return;
  auto* h = reinterpret_cast<MessageHeader*>(p.sendData + pos);
  h->magic = kMessageMagic;
  h->flags = kFlagRewind;
  h->seq = p.sendSeq;
  h->bytes = 0;
  h->addr = 0;
  h->call = CallDesc{};
  p.sendHead += ring - pos;
  p.sendCtr->head.store(p.sendHead, std::memory_order_release);
}

// Completes handed-over sends, in order, as far as the receiver has acknowledged single copies.
bool ShmTransport::reapAcks(Peer& p) {
  if (p.unacked.empty()) return false;
  const uint64_t acked = p.sendCtr->cmaAcked.load(std::memory_order_acquire);
  bool moved = false;
  while (!p.unacked.empty() && p.unacked.front().ack <= acked) {
    Request* r = p.unacked.front().req;
    r->doneBytes = r->bytes;
    r->complete = moved = true;
    p.unacked.pop_front();
  }
  return moved;
}

// Reads a single-copy message from the sender's process: straight into dst, or block by block
// through cmaBlock_ and reduced into dst. A sender that died shows up as ESRCH (or EFAULT while
// its memory is being torn down) and is reported as died.
Status ShmTransport::readSingleCopy(Peer& p, Request* r, bool* moved) {
  const size_t elem = r->operand ? dtypeSize(r->dtype) : 1;
  const uint64_t step = r->operand ? kCmaBlockBytes / elem * elem : kCmaSliceBytes;
  while (r->doneBytes < r->bytes) {
    const uint64_t n = std::min(r->bytes - r->doneBytes, step);
    uint8_t* to = r->operand ? cmaBlock_.get() : r->dst + r->doneBytes;
    uint64_t got = 0;
    while (got < n) {
      iovec local{to + got, n - got};
      iovec remote{reinterpret_cast<void*>(p.recvAddr + r->doneBytes + got), n - got};
      ssize_t rc = process_vm_readv(p.id.pid, &local, 1, &remote, 1, 0);
      if (rc > 0) {
        got += static_cast<uint64_t>(rc);
        continue;
      }
      int err = rc == 0 ? EFAULT : errno;
      if (err == EINTR) continue;
      // A process being killed may still exist while its memory is already gone.
      for (int i = 0; i < 100 && err != ESRCH && !processGone(p.id.pid); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (err == ESRCH || processGone(p.id.pid))
        return remoteError("peer ", p.id.describe(), " died");
      return errnoStatus(strCat("shm: single-copy read of ", n - got, " bytes from ",
                                p.id.describe(), " by rank ", rank_),
                         err);
    }
    if (r->operand) {
      kernels::reduce(r->dst + r->doneBytes, r->operand + r->doneBytes, to, n / elem, r->dtype,
                      r->op);
    }
    r->doneBytes += n;
    *moved = true;
  }
  return Status();
}

Status ShmTransport::pumpRecvs(Peer& p, bool* moved) {
  const uint64_t ring = ringBytes_;
  // Bytes published beyond our tail. The tail may run ahead of the head we last saw: at a
  // message's end we skip its padding before the sender has published the padded head.
  auto avail = [&](uint64_t need) -> uint64_t {
    if (p.recvHeadSeen < p.recvTail + need)
      p.recvHeadSeen = p.recvCtr->head.load(std::memory_order_acquire);
    return p.recvHeadSeen > p.recvTail ? p.recvHeadSeen - p.recvTail : 0;
  };
  while (!p.recvs.empty()) {
    Request* r = p.recvs.front();
    if (!p.recvStarted) {
      if (avail(kSlot) < kSlot) break;
      const auto* h = reinterpret_cast<const MessageHeader*>(p.recvData + p.recvTail % ring);
      if (h->magic == kMessageMagic && h->flags == kFlagRewind && h->seq == p.recvSeq) {
        p.recvTail = alignUp(p.recvTail + kSlot, ring);  // the sender went on at the ring's start
        *moved = true;
        p.recvCtr->tail.store(p.recvTail, std::memory_order_release);
        continue;
      }
      if (h->magic != kMessageMagic || h->seq != p.recvSeq)
        return internalError("shm: corrupt message header #", p.recvSeq, " from peer ",
                             p.id.describe(), " to rank ", rank_);
      if (r->call && !sameCall(*r->call, h->call))
        return callMismatch(
            rank_, *r->call, p.rank, h->call,
            strCat("rank ", rank_, " receiving from rank ", p.rank, " over shm").c_str());
      if (h->bytes != r->bytes)
        return invalidUsage("shm: message #", p.recvSeq, " from peer ", p.id.describe(), " has ",
                            h->bytes, " bytes but rank ", rank_, " posted a receive of ", r->bytes);
      p.recvCma = (h->flags & kFlagCma) != 0;
      if (p.recvCma && !p.cmaRecv)
        return internalError("shm: single-copy message #", p.recvSeq, " from peer ",
                             p.id.describe(), " but rank ", rank_, " cannot read that peer");
      p.recvAddr = h->addr;
      p.recvCheck = (h->flags & kFlagCrc) != 0;
      p.recvCrcWant = h->crc;
      p.recvCrc = 0;
      ++p.recvSeq;
      p.recvTail += kSlot;
      p.recvStarted = *moved = true;
      p.recvCtr->tail.store(p.recvTail, std::memory_order_release);
    }
    if (p.recvCma) {
      LOOM_CHECK(readSingleCopy(p, r, moved));
      p.recvCtr->cmaAcked.store(++p.cmaRead, std::memory_order_release);
      ++cmaReceived_;
      r->complete = true;
      p.recvs.pop_front();
      p.recvStarted = p.recvCma = false;
      continue;
    }
    const size_t elem = r->operand ? dtypeSize(r->dtype) : 1;
    while (r->doneBytes < r->bytes) {
      uint64_t left = r->bytes - r->doneBytes;
      uint64_t pos = p.recvTail % ring;
      uint64_t n = std::min({left, avail(std::min(left, kSliceBytes)), ring - pos, kSliceBytes});
      n -= n % elem;
      if (n == 0) break;
      const uint8_t* in = p.recvData + pos;
      if (r->operand) {
        kernels::reduce(r->dst + r->doneBytes, r->operand + r->doneBytes, in, n / elem, r->dtype,
                        r->op);
      } else {
        std::memcpy(r->dst + r->doneBytes, in, n);
      }
      if (p.recvCheck) p.recvCrc = kernels::crc32c(p.recvCrc, in, n);
      p.recvTail += n;
      r->doneBytes += n;
      *moved = true;
      p.recvCtr->tail.store(p.recvTail, std::memory_order_release);
      notifyPeer(p);
    }
    if (r->doneBytes < r->bytes) break;
    if (p.recvCheck && p.recvCrc != p.recvCrcWant) return checkCrc(p, r->bytes);
    p.recvTail = alignUp(p.recvTail, kSlot);
    p.recvCtr->tail.store(p.recvTail, std::memory_order_release);
    r->complete = true;
    p.recvs.pop_front();
    p.recvStarted = false;
  }
  return Status();
}

Status ShmTransport::pumpPeer(Peer& p, bool* moved) {
  *moved = false;
  Status st;
  if (!p.unacked.empty()) *moved = reapAcks(p);
  if (!p.sends.empty()) *moved = pumpSends(p) || *moved;
  if (!p.recvs.empty()) st = pumpRecvs(p, moved);
  if (*moved) ringDoorbell(p, /*forceWake=*/false);
  return st;
}

// A peer with requests pending that made no progress: an error if the peer aborted, or closed
// and what we wait for is not already in the ring.
Status ShmTransport::checkStalled(Peer& p) {
  if (!p.busy()) return Status();
  uint32_t state = p.remote->control()->state.load(std::memory_order_acquire);
  if (state == kAlive) return Status();
  if (state == kAborted) return abortedError(p);
  bool moved = false;  // closed: its last data was published before the flag; take it first
  LOOM_CHECK(pumpPeer(p, &moved));
  if (moved || !p.busy()) return Status();
  return remoteError("peer ", p.id.describe(), " closed its shm transport with ",
                     p.sends.size() + p.unacked.size(), " sends and ", p.recvs.size(),
                     " receives of rank ", rank_, " pending");
}

Status ShmTransport::progress(bool* progressed) {
  *progressed = false;
  lastSeenSeq_ = bell()->seq.load(std::memory_order_acquire);
  for (Peer& p : peers_) {
    if (!p.busy()) continue;
    bool moved = false;
    LOOM_CHECK(pumpPeer(p, &moved));
    if (moved) {
      *progressed = true;
    } else {
      LOOM_CHECK(checkStalled(p));
    }
  }
  return Status();
}

void ShmTransport::ringDoorbell(Peer& p, bool forceWake) {
  Doorbell& d = p.remote->control()->doorbell;
  d.seq.fetch_add(1, std::memory_order_seq_cst);
  const uint32_t how = d.sleeping.load(std::memory_order_seq_cst);
  if (forceWake || how == kSleepFutex) futexWake(&d.seq);
  if (forceWake || how == kSleepPoll) ringBell(p.bell);
}

// Mid-stream, after publishing a slice (or freeing ring space): the peer hears of it now, so that
// it works in parallel with us. Its doorbell is rung whether it sleeps or spins: a peer spinning in
// wait() watches only the doorbell, and progress() rings it otherwise only at its end, after all
// the slices it moved (a sender's reduction of what it received included) -- which kept a peer
// that was ahead idle for the length of our whole receive.
void ShmTransport::notifyPeer(Peer& p) { ringDoorbell(p, /*forceWake=*/false); }

bool ShmTransport::woken() {
  return bell()->seq.load(std::memory_order_acquire) != lastSeenSeq_ ||
         wakeCount_.load(std::memory_order_acquire) != wakeSeen_ ||
         (abortFlag_ && abortFlag_->load(std::memory_order_relaxed));
}

Status ShmTransport::wait(int64_t timeoutUs) {
  Doorbell* d = bell();
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::microseconds(std::max<int64_t>(timeoutUs, 0));
  const auto spinEnd = std::min(deadline, start + std::chrono::microseconds(spinUs_));
  Status st;
  // Spin briefly, yielding: with more ranks than cores the peer we wait for may need this core.
  while (!woken() && Clock::now() < spinEnd) {
    for (int i = 0; i < 16 && !woken(); ++i) cpuRelax();
    if (!woken()) sched_yield();
  }
  if (!woken()) {
    d->sleeping.store(kSleepFutex, std::memory_order_seq_cst);
    while (!woken()) {
      int64_t left =
          std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now()).count();
      if (left <= 0) break;
      int err = futexWait(&d->seq, lastSeenSeq_, left);
      if (err != 0 && err != EAGAIN && err != EINTR && err != ETIMEDOUT) {
        st = errnoStatus(strCat("shm: futex wait of rank ", rank_), err);
        break;
      }
    }
    d->sleeping.store(kAwake, std::memory_order_relaxed);
  }
  wakeSeen_ = wakeCount_.load(std::memory_order_acquire);
  return st;
}

bool ShmTransport::armPoll(std::vector<pollfd>* fds) {
  Doorbell* d = bell();
  // Flag first, then look (seq_cst on both sides): either we see the ringer's bump or it sees
  // the flag and writes the FIFO.
  d->sleeping.store(kSleepPoll, std::memory_order_seq_cst);
  if (woken()) {
    d->sleeping.store(kAwake, std::memory_order_relaxed);
    wakeSeen_ = wakeCount_.load(std::memory_order_acquire);
    return false;
  }
  if (ownBell_.valid()) fds->push_back({ownBell_.get(), POLLIN, 0});
  return true;
}

void ShmTransport::disarmPoll() {
  bell()->sleeping.store(kAwake, std::memory_order_relaxed);
  if (ownBell_.valid()) {
    char buf[64];
    while (read(ownBell_.get(), buf, sizeof(buf)) > 0) {
    }
  }
  wakeSeen_ = wakeCount_.load(std::memory_order_acquire);
}

void ShmTransport::wake() {
  wakeCount_.fetch_add(1, std::memory_order_acq_rel);
  if (abortFlag_ && abortFlag_->load()) markState(kAborted);
  Doorbell* d = bell();
  d->seq.fetch_add(1, std::memory_order_seq_cst);
  const uint32_t how = d->sleeping.load(std::memory_order_seq_cst);
  if (how == kSleepFutex) futexWake(&d->seq);
  if (how == kSleepPoll) ringBell(ownBell_);
}

void ShmTransport::markState(PeerState s) {
  if (!own_) return;
  std::atomic<uint32_t>& state = own_->control()->state;
  uint32_t cur = state.load();
  // Aborted is final; closed may still become aborted.
  while (cur != kAborted && cur != s && !state.compare_exchange_weak(cur, s)) {
  }
  for (Peer& p : peers_) {
    if (p.remote) ringDoorbell(p, /*forceWake=*/true);
  }
}

Status ShmTransport::checkPeers() {
  for (Peer& p : peers_) {
    uint32_t state = p.remote->control()->state.load(std::memory_order_acquire);
    if (state == kAborted) return abortedError(p);
    if (state == kClosed) {
      // A peer that closed cleanly may have exited: only pending requests make that an error.
      LOOM_CHECK(checkStalled(p));
    } else if (processGone(p.id.pid)) {
      return remoteError("peer ", p.id.describe(), " died");
    }
  }
  return checkCalls();
}

}  // namespace loom::transport::shm
