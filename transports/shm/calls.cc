// The shm transport's part in checking calls (core/call_desc.h): each rank publishes the call it
// is in (beginCall) in its control block under a sequence lock; a stalled rank compares its peers'
// with its own (checkCalls), which finds mismatches that no message reveals (one rank waits on the
// direct path while another waits for a ring message; two ranks both wait to receive). A rank
// that gives up (poison) leaves its reason in its control block before it marks itself aborted,
// so peers fail with that reason.
#include <algorithm>
#include <atomic>
#include <cstring>

#include "transports/shm/transport.h"

namespace loom::transport::shm {
namespace {

// A consistent copy of the call published in `cb`, or false when the owner is mid-write.
bool readCall(const ControlBlock* cb, CallDesc* out) {
  for (int i = 0; i < 8; ++i) {
    const uint64_t v = cb->callVersion.load(std::memory_order_acquire);
    if (v & 1) continue;
    CallDesc d;
    std::memcpy(&d, &cb->call, sizeof d);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (cb->callVersion.load(std::memory_order_relaxed) != v) continue;
    *out = d;
    return true;
  }
  return false;
}

}  // namespace

// A message of an earlier checked call still unread from a peer that we receive nothing from now:
// the calls did not match (the peer sent what this rank never received). Costs one load per peer
// when the rings are empty.
Status ShmTransport::checkLeftovers(const CallDesc& call) {
  for (Peer& p : peers_) {
    if (!p.recvs.empty() || p.recvStarted) continue;
    uint64_t at = p.recvTail;
    const uint64_t head = p.recvCtr->head.load(std::memory_order_acquire);
    if (head < at + kSlot) continue;
    const auto* h = reinterpret_cast<const MessageHeader*>(p.recvData + at % ringBytes_);
    if (h->magic == kMessageMagic && h->flags == kFlagRewind) {
      at = alignUp(at + kSlot, ringBytes_);
      if (head < at + kSlot) continue;
      h = reinterpret_cast<const MessageHeader*>(p.recvData + at % ringBytes_);
    }
    if (h->magic != kMessageMagic || !h->call.checked || h->call.seq >= call.seq) continue;
    const CallDesc& mine = lastCall_.seq == h->call.seq ? lastCall_ : currentCall_;
    return callMismatch(
        rank_, mine, p.rank, h->call,
        strCat("rank ", rank_, " when it began call #", call.seq, ": a message of rank ", p.rank,
               "'s call #", h->call.seq, " was never received")
            .c_str());
  }
  return Status();
}

Status ShmTransport::beginCall(const CallDesc& call) {
  if (call.checked) LOOM_CHECK(checkLeftovers(call));
  lastCall_ = currentCall_;
  currentCall_ = call;
  if (!own_) return Status();
  ControlBlock* cb = own_->control();
  const uint64_t v = cb->callVersion.load(std::memory_order_relaxed);
  cb->callVersion.store(v + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  std::memcpy(&cb->call, &call, sizeof call);
  cb->callVersion.store(v + 2, std::memory_order_release);
  return Status();
}

Status ShmTransport::checkCalls() {
  for (const Peer& p : peers_) {
    if (p.remote->control()->state.load(std::memory_order_acquire) == kAborted)
      return abortedError(p);
    if (!currentCall_.checked) continue;
    CallDesc theirs;
    if (!readCall(p.remote->control(), &theirs) || !theirs.checked) continue;
    if (theirs.seq == currentCall_.seq && !sameCall(currentCall_, theirs))
      return callMismatch(rank_, currentCall_, p.rank, theirs,
                          strCat("rank ", rank_, " while stalled (the call rank ", p.rank,
                                 " published in shared memory)")
                              .c_str());
  }
  return Status();
}

Status ShmTransport::abortedError(const Peer& p) const {
  const ControlBlock* cb = p.remote->control();
  char why[sizeof cb->abortReason];
  std::memcpy(why, cb->abortReason, sizeof why);
  why[sizeof why - 1] = '\0';
  if (why[0] == '\0') return remoteError("peer ", p.id.describe(), " aborted its communicator");
  return remoteError("peer ", p.id.describe(), " gave up on the communicator: ", why);
}

void ShmTransport::poison(const std::string& reason) {
  if (!own_) return;
  ControlBlock* cb = own_->control();
  const size_t n = std::min(reason.size(), sizeof cb->abortReason - 1);
  std::memcpy(cb->abortReason, reason.data(), n);
  cb->abortReason[n] = '\0';
  std::atomic_thread_fence(std::memory_order_release);
  markState(kAborted);
}

Status ShmTransport::checkCrc(const Peer& p, uint64_t bytes) const {
  return systemError(kCorruptMessage, "message #", p.recvSeq - 1, " of ", bytes,
                     " bytes from rank ", p.rank, " to rank ", rank_, " on the shm link ",
                     p.id.describe(), " -> rank ", rank_, " failed its checksum (CRC32C ",
                     p.recvCrc, ", sender's ", p.recvCrcWant, ")");
}

// LOOM_FAULT: close marks this rank's side closed (shm has no per-pair connection, so every shm
// peer sees it) and fails later posts to the peer; flip arms the next payload copied into a ring
// (or the direct path's slot) to that peer.
void ShmTransport::injectFault(const FaultSpec& f) {
  if (f.kind == FaultSpec::Kind::kClose) {
    faultClosed_.assign(nranks_, f.peer < 0);
    if (f.peer >= 0 && f.peer < nranks_) faultClosed_[f.peer] = true;
    markState(kClosed);
  } else if (f.kind == FaultSpec::Kind::kFlip) {
    flipArmed_ = true;
    flipPeer_ = f.peer;
    if (direct_) direct_->armFlip();
  }
}

}  // namespace loom::transport::shm
