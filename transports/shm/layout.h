// Shared-memory layout of the shm transport (see transport.h for the protocol).
//
// Every rank r that has shm peers owns one POSIX segment "/loom-<commTag>-r<r>". It holds r's
// control block (doorbell futex, liveness state, pid) and one ring per sender s (the directed
// pair s -> r). Senders map the receiver's segment and write into their ring; the receiver copies
// or reduces straight out of it. The segment is unlinked as soon as every peer has mapped it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace loom::transport::shm {

constexpr size_t kCacheLine = 64;
// Head and tail are kept two lines apart so the adjacent-line prefetcher does not pair them.
constexpr size_t kCounterStride = 128;
// Every message starts on a kSlot boundary and is padded to it, so elements never straddle the
// ring's end and a receive can reduce in place from the ring.
constexpr size_t kSlot = 64;
constexpr uint64_t kSegmentMagic = 0x6c6f6f6d73686d31ull;  // "loomshm1"
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
  alignas(kCounterStride) Doorbell doorbell;
  alignas(kCounterStride) std::atomic<uint32_t> state;  // PeerState
  // ringOffset[s]: offset of the ring from sender s (0: s is not a peer). nranks entries follow.
  alignas(kCounterStride) uint64_t ringOffset[1];
};

struct alignas(kCounterStride) RingCounters {
  alignas(kCounterStride) std::atomic<uint64_t> head;  // bytes published by the sender
  alignas(kCounterStride) std::atomic<uint64_t> tail;  // bytes consumed by the receiver
};
// Ring data starts kRingDataOffset bytes after the counters.
constexpr size_t kRingDataOffset = 4096;

// First kSlot bytes of every message in the ring.
struct MessageHeader {
  uint32_t magic;
  uint32_t reserved;
  uint64_t seq;    // per directed pair, from 0
  uint64_t bytes;  // payload bytes that follow (then padding to kSlot)
};
static_assert(sizeof(MessageHeader) <= kSlot, "header fits a slot");
static_assert(std::atomic<uint32_t>::is_always_lock_free, "futex word must be lock free");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "counters must be lock free");

inline uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// "/loom-<commTag>-r<rank>"
inline std::string segmentName(const std::string& commTag, int rank) {
  return "/loom-" + commTag + "-r" + std::to_string(rank);
}

}  // namespace loom::transport::shm
