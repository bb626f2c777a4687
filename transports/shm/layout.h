// Shared-memory layout of the shm transport (see transport.h for the protocol).
//
// Every rank r that has shm peers owns one POSIX segment "/loom-<commTag>-r<r>". It holds r's
// control block (doorbell futex, liveness state, pid) and one ring per sender s (the directed
// pair s -> r). Senders map the receiver's segment and write into their ring; the receiver copies
// or reduces straight out of it. The segment is unlinked as soon as every peer has mapped it.
// Large messages may instead travel single-copy (Cross Memory Attach, see transport.h): the ring
// then carries only a descriptor slot and the receiver acknowledges through RingCounters::cmaAcked.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/call_desc.h"

namespace loom::transport::shm {

constexpr size_t kCacheLine = 64;
// Head and tail are kept two lines apart so the adjacent-line prefetcher does not pair them.
constexpr size_t kCounterStride = 128;
// Every message starts on a kSlot boundary and is padded to it, so elements never straddle the
// ring's end and a receive can reduce in place from the ring.
constexpr size_t kSlot = 64;
constexpr uint64_t kSegmentMagic = 0x6c6f6f6d73686d33ull;  // "loomshm3"
constexpr uint32_t kMessageMagic = 0x6d736731u;            // "msg1"

enum PeerState : uint32_t { kAlive = 0, kClosed = 1, kAborted = 2 };

// Futex word of the owning rank: senders bump `seq` after publishing data, receivers after freeing
// space; FUTEX_WAKE is issued only when `sleeping` is set.
struct alignas(kCounterStride) Doorbell {
  std::atomic<uint32_t> seq;
  std::atomic<uint32_t> sleeping;
};

struct alignas(kCounterStride) ControlBlock {
  uint64_t magic;
  uint64_t segmentBytes;
  uint64_t ringBytes;  // data bytes per ring (multiple of kSlot)
  int32_t rank;
  int32_t nranks;
  int32_t pid;
  // CMA probe: a peer reads 8 bytes at probeAddr in our process and expects probeValue.
  uint64_t probeAddr;
  uint64_t probeValue;
  alignas(kCounterStride) Doorbell doorbell;
  alignas(kCounterStride) std::atomic<uint32_t> state;  // PeerState
  // The checked call the owner is in (Transport::beginCall), under a sequence lock: callVersion is
  // odd while the owner writes `call`. Peers read it when stalled (a different call at the same
  // sequence number is a mismatch).
  alignas(kCounterStride) std::atomic<uint64_t> callVersion;
  CallDesc call;
  // Why the owner gave up (Transport::poison), NUL-terminated; written before state = kAborted.
  char abortReason[1024];
  // ringOffset[s]: offset of the ring from sender s (0: s is not a peer). nranks entries follow.
  alignas(kCounterStride) uint64_t ringOffset[1];
};

struct alignas(kCounterStride) RingCounters {
  alignas(kCounterStride) std::atomic<uint64_t> head;  // bytes published by the sender
  alignas(kCounterStride) std::atomic<uint64_t> tail;  // bytes consumed by the receiver
  // Single-copy (CMA) messages the receiver has finished reading: the sender's buffers of the
  // first cmaAcked CMA messages may be reused.
  alignas(kCounterStride) std::atomic<uint64_t> cmaAcked;
  // Written by the receiver during setup, before the second setup round: kCmaUsable when it can
  // read the sender's memory and LOOM_SHM_CMA allows single-copy on this pair.
  alignas(kCounterStride) std::atomic<uint32_t> cmaState;
};
enum CmaState : uint32_t { kCmaUnknown = 0, kCmaUsable = 1, kCmaUnusable = 2 };
// Ring data starts kRingDataOffset bytes after the counters.
constexpr size_t kRingDataOffset = 4096;

// First kSlot bytes of every message in the ring.
// With kFlagCma the payload is not in the ring: the receiver reads `bytes` bytes at `addr` in the
// sender's process (pid known from setup) and then bumps RingCounters::cmaAcked.
struct MessageHeader {
  uint32_t magic;
  uint32_t flags;  // kFlag*
  uint64_t seq;    // per directed pair, from 0
  uint64_t bytes;  // payload bytes that follow (then padding to kSlot), or that `addr` holds
  uint64_t addr;   // kFlagCma: address of the payload in the sender's process
  CallDesc call;   // the sender's call (core/call_desc.h); the receiver compares it with its own
  uint32_t crc;    // kFlagCrc: CRC32C of the payload (LOOM_CHECKSUM)
};
constexpr uint32_t kFlagCma = 1;
// kFlagRewind: no message; the sender found the ring empty and went on at the ring's start, so the
// receiver moves its tail to the next multiple of the ring size (transport.h, "Rewinding").
constexpr uint32_t kFlagRewind = 2;
// kFlagCrc: `crc` holds the payload's CRC32C; the receiver checks it at the message's end.
constexpr uint32_t kFlagCrc = 4;
// A sender rewinds at a message's start once its cursor is at least this far into the ring.
constexpr uint64_t kRewindBytes = 64 << 10;
static_assert(sizeof(MessageHeader) <= kSlot, "header fits a slot");
static_assert(std::atomic<uint32_t>::is_always_lock_free, "futex word must be lock free");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "counters must be lock free");

inline uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// "/loom-<commTag>-r<rank>"
inline std::string segmentName(const std::string& commTag, int rank) {
  return "/loom-" + commTag + "-r" + std::to_string(rank);
}

// The rank's wake-up FIFO, next to its segment (glibc keeps shm_open names in /dev/shm).
inline std::string bellPath(const std::string& commTag, int rank) {
  return "/dev/shm" + segmentName(commTag, rank) + ".bell";
}

// Doorbell::sleeping: how the owner sleeps, so a ringer knows how to wake it.
constexpr uint32_t kAwake = 0;
constexpr uint32_t kSleepFutex = 1;  // in wait(): FUTEX_WAKE on seq
constexpr uint32_t kSleepPoll = 2;   // in a joint poll with other transports: a byte to its FIFO

}  // namespace loom::transport::shm
