#include "transports/shm/direct.h"

#include <fcntl.h>
#include <immintrin.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "core/agree.h"
#include "core/futex.h"
#include "core/log.h"
#include "kernels/crc32c.h"
#include "kernels/reduce.h"

namespace loom::transport::shm {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kLine = 64;
constexpr int kPureBackoff = 64;  // calls that yield at once after a wait outlasted the pure spin

struct Header {
  alignas(kLine) std::atomic<uint32_t> sleepers{0};  // ranks sleeping (or about to) on `wake`
  alignas(kLine) std::atomic<uint32_t> wake{0};      // futex word, bumped when sleepers > 0
};
static_assert(sizeof(Header) == 2 * kLine, "header is two cache lines");

size_t alignUp(size_t v, size_t a) { return (v + a - 1) / a * a; }

int64_t usSince(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count();
}

Status agree(const ShmDirect::Args& a, const Status& local, const char* step) {
  return agreeOnOutcome(a.allGather, a.rank, a.nranks, a.ids, local,
                        strCat("one-host direct path setup (", step, ")"));
}

Status mapSegment(const std::string& name, size_t bytes, bool create, void** base) {
  int fd = shm_open(name.c_str(), create ? O_RDWR | O_CREAT | O_EXCL : O_RDWR, 0600);
  if (fd < 0) return errnoStatus(strCat("shm_open ", name), errno);
  if (create && ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    int e = errno;
    close(fd);
    return errnoStatus(strCat("ftruncate ", name), e);
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int e = errno;
  close(fd);
  if (p == MAP_FAILED) return errnoStatus(strCat("mmap ", name), e);
  *base = p;
  return Status();
}

}  // namespace

struct ShmDirect::Slot {
  std::atomic<uint64_t> seq;  // the data that follows belongs to call `seq`
  CallDesc call;              // the caller's call (written before seq)
  uint32_t crc;               // LOOM_CHECKSUM: CRC32C of the data
  uint32_t pad;
  uint8_t* data() { return reinterpret_cast<uint8_t*>(this) + kDataOffset; }
  static constexpr size_t kDataOffset = sizeof(uint64_t) + sizeof(CallDesc) + 8;
};

Status ShmDirect::create(const Args& a, std::unique_ptr<ShmDirect>* out) {
  if (a.nranks < 2 || a.ids.size() != static_cast<size_t>(a.nranks) || !a.allGather ||
      a.tag.empty() || a.tag.find('/') != std::string::npos)
    return invalidArgument("ShmDirect::create: needs nranks >= 2, ids, allGather and a tag");
  std::unique_ptr<ShmDirect> d(new ShmDirect(a));
  d->stride_ = alignUp(Slot::kDataOffset + a.maxBytes, kLine);
  d->bytes_ = sizeof(Header) + 2 * static_cast<size_t>(a.nranks) * d->stride_;
  const std::string name = strCat("/loom-", a.tag, "-direct");
  // Round 1: rank 0 creates and sizes the segment. Round 2: the others map it. Then it is unlinked
  // (by everyone on failure, so a rank that died half way leaves nothing in /dev/shm).
  Status s = a.rank == 0 ? mapSegment(name, d->bytes_, true, &d->base_) : Status();
  if (s.ok() && a.rank == 0) new (d->base_) Header();
  s = agree(a, s, "create");
  if (s.ok() && a.rank != 0) s = mapSegment(name, d->bytes_, false, &d->base_);
  Status all = agree(a, s, "map");
  if (a.rank == 0 || !all.ok()) shm_unlink(name.c_str());
  LOOM_CHECK(all);
  d->oversubscribed_ = a.nranks > hostCpus(a.ids, a.ids[a.rank].hostIndex);
  *out = std::move(d);
  return Status();
}

ShmDirect::~ShmDirect() {
  if (base_ != nullptr) munmap(base_, bytes_);
}

ShmDirect::Slot* ShmDirect::slot(uint64_t seq, int rank) const {
  size_t index = (seq & 1) * static_cast<size_t>(args_.nranks) + static_cast<size_t>(rank);
  return reinterpret_cast<Slot*>(static_cast<uint8_t*>(base_) + sizeof(Header) + index * stride_);
}

Status ShmDirect::allReduce(const void* send, void* recv, uint64_t count, DataType dt, RedOp op,
                            const CallDesc* call) {
  const uint64_t bytes = count * dtypeSize(dt);
  if (bytes > args_.maxBytes)
    return internalError("one-host direct path: ", bytes, " bytes exceed its slot of ",
                         args_.maxBytes);
  const uint64_t seq = ++seq_;
  Slot* mine = slot(seq, args_.rank);
  mine->call = call ? *call : CallDesc{};
  if (bytes > 0) {
    if (args_.checksum) mine->crc = kernels::crc32c(0, send, bytes);
    std::memcpy(mine->data(), send, bytes);
    if (flipArmed_) {  // LOOM_FAULT=flip
      mine->data()[0] ^= 1;
      flipArmed_ = false;
    }
  }
  mine->seq.store(seq, std::memory_order_seq_cst);
  auto* hdr = static_cast<Header*>(base_);
  if (hdr->sleepers.load(std::memory_order_seq_cst) > 0) {
    hdr->wake.fetch_add(1, std::memory_order_seq_cst);
    futexWake(&hdr->wake);
  }
  LOOM_CHECK(waitAll(seq));
  LOOM_CHECK(compareCalls(seq, mine->call));
  if (bytes == 0) return Status();
  if (args_.checksum) LOOM_CHECK(checkSums(seq, bytes));
  kernels::reduce(recv, slot(seq, 0)->data(), slot(seq, 1)->data(), count, dt, op);
  for (int q = 2; q < args_.nranks; ++q)
    kernels::reduceInto(recv, slot(seq, q)->data(), count, dt, op);
  return Status();
}

Status ShmDirect::waitAll(uint64_t seq) {
  const int p = args_.nranks;
  int next = 0;  // ranks below `next` have arrived
  auto arrived = [&] {
    while (next < p && (next == args_.rank || slot(seq, next)->seq.load() >= seq)) ++next;
    return next == p;
  };
  // Spin without yielding for a few microseconds (a peer on another core arrives in well under
  // one), then yield between checks until spinUs (the peer may need this core), then sleep.
  // A wait that outlasts the pure spin says the peers are not running beside us (other processes
  // hold the other cores, or the peer waits for this very core): the next kPureBackoff calls then
  // yield from the start, since spinning would only keep the peer off the core it needs.
  const auto t0 = Clock::now();
  int64_t pureUs = oversubscribed_ ? 0 : std::min<int64_t>(args_.spinUs, 4);
  if (pureSkips_ > 0) {
    --pureSkips_;
    pureUs = 0;
  }
  for (uint32_t i = 1;; ++i) {
    if (arrived()) return Status();
    _mm_pause();
    if ((i & 15) == 0) {
      int64_t us = usSince(t0);
      if (us >= pureUs && pureUs > 0) {
        pureSkips_ = kPureBackoff;
        pureUs = 0;
      }
      if (us >= args_.spinUs) break;
      if (us >= pureUs) sched_yield();
    }
  }
  auto* hdr = static_cast<Header*>(base_);
  const int64_t timeoutUs = args_.timeoutMs * 1000;
  int64_t lastCheckUs = 0;
  for (;;) {
    hdr->sleepers.fetch_add(1, std::memory_order_seq_cst);
    uint32_t v = hdr->wake.load(std::memory_order_seq_cst);
    if (!arrived()) {
      int64_t left = timeoutUs - usSince(t0);
      futexWait(&hdr->wake, v, std::max<int64_t>(1, std::min<int64_t>(left, 50000)));
    }
    hdr->sleepers.fetch_sub(1, std::memory_order_seq_cst);
    if (arrived()) return Status();
    if (args_.abortFlag != nullptr && args_.abortFlag->load(std::memory_order_relaxed))
      return invalidUsage("operation aborted (loomCommAbort)");
    if (args_.revokedFlag != nullptr && args_.revokedFlag->load(std::memory_order_relaxed))
      return revokedError("communicator revoked during the one-host direct all-reduce");
    const int64_t now = usSince(t0);
    if (now >= timeoutUs) return stalled(seq, true);
    if (now - lastCheckUs >= args_.peerCheckMs * 1000) {
      lastCheckUs = now;
      // A peer that gave up says why (even once it has exited); then the dead ones.
      if (args_.peerCheck) LOOM_CHECK(args_.peerCheck());
      LOOM_CHECK(stalled(seq, false));
    }
  }
}

// Every rank's call against ours, in rank order: the first that differs is named.
Status ShmDirect::compareCalls(uint64_t seq, const CallDesc& mine) const {
  if (!mine.checked) return Status();
  for (int q = 0; q < args_.nranks; ++q) {
    if (q == args_.rank) continue;
    const CallDesc& theirs = slot(seq, q)->call;
    if (!sameCall(mine, theirs))
      return callMismatch(args_.rank, mine, q, theirs,
                          strCat("rank ", args_.rank, " on the one-host direct path").c_str());
  }
  return Status();
}

// LOOM_CHECKSUM: every rank's slot (this rank's too: what it reduces is what is in the segment)
// against the CRC its writer stored.
Status ShmDirect::checkSums(uint64_t seq, uint64_t bytes) const {
  for (int q = 0; q < args_.nranks; ++q) {
    Slot* s = slot(seq, q);
    const uint32_t got = kernels::crc32c(0, s->data(), bytes);
    if (got != s->crc)
      return systemError(kCorruptMessage, "the ", bytes, "-byte contribution of rank ", q,
                         " on the one-host direct path (shared segment, ", args_.ids[q].describe(),
                         " -> rank ", args_.rank, ") failed its checksum (CRC32C ", got,
                         ", sender's ", s->crc, ")");
  }
  return Status();
}

// The ranks that have not arrived at call `seq`: a timeout naming them, or (timedOut false) an
// error naming those whose process is gone, or OK.
Status ShmDirect::stalled(uint64_t seq, bool timedOut) const {
  std::string late, dead;
  for (int q = 0; q < args_.nranks; ++q) {
    if (q == args_.rank || slot(seq, q)->seq.load() >= seq) continue;
    const PeerIdentity& id = args_.ids[q];
    late += (late.empty() ? "" : ", ") + id.describe();
    if (processGone(id.pid)) dead += (dead.empty() ? "" : ", ") + id.describe();
  }
  if (!dead.empty())
    return remoteError(dead, dead.find(", ") == std::string::npos ? " is" : " are",
                       " no longer running (one-host direct all-reduce)");
  if (timedOut)
    return timeoutError("timed out after ", args_.timeoutMs,
                        " ms in the one-host direct all-reduce waiting for ", late);
  return Status();
}

}  // namespace loom::transport::shm
