// A Schedule is data: for one rank, an ordered list of steps over byte ranges of buffers.
// Algorithms (src/algo) build Schedules; the Executor runs them over transports, the in-memory
// checker runs all ranks' schedules without a transport, the simulator (src/sim) runs them over a
// modelled fabric and the cost model (src/plan) prices them.
//
// Matching rule: messages between a pair of ranks are FIFO per direction. The k-th Send from rank a
// to rank b matches the k-th Recv/RecvReduce on b from a, and both carry the same byte count.
// Builders must keep that order consistent on both sides; the checker verifies it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/datatype.h"

namespace loom::sched {

enum class OpKind : uint8_t {
  kSend,        // send `bytes` from src to peer
  kRecv,        // receive `bytes` from peer into dst
  kRecvReduce,  // dst = src (op) incoming, elementwise; src may equal dst
  kCopy,        // dst = src (local)
  kReduce,      // dst = dst (op) src (local)
  // dst = every rank's src, reduced in rank order, through the transport's collective primitive
  // (transport::HostCollective: shm's one-host segment); every rank of the communicator runs its
  // k-th such step together; bytes 0 is a barrier. No peer.
  kHostAllReduce,
};
const char* opKindName(OpKind k);

// Buffer slots: 0 = user send buffer, 1 = user receive buffer, 2 = scratch (executor-allocated,
// Schedule::scratchBytes). Group operations merge schedules and renumber slots (3, 4, ...).
constexpr uint16_t kBufSend = 0;
constexpr uint16_t kBufRecv = 1;
constexpr uint16_t kBufScratch = 2;

struct BufRef {
  uint16_t buf = kBufSend;
  uint64_t offset = 0;
};

struct Step {
  OpKind op = OpKind::kCopy;
  // The channel this step belongs to (Schedule::channels): a multi-channel algorithm runs k
  // independent rings or trees over slices of the buffer, each bound to its own NIC/rail. The
  // checker and the executor need not read it (matching is per pair, whatever the channel); the
  // simulator and the cost model report per channel.
  uint8_t channel = 0;
  int32_t peer = -1;  // communicator rank for Send/Recv/RecvReduce
  BufRef src;         // Send, RecvReduce (local operand), Copy, Reduce
  BufRef dst;         // Recv, RecvReduce, Copy, Reduce
  uint64_t bytes = 0;
  uint32_t depBegin = 0;  // deps are indices of earlier steps: Schedule::deps[depBegin, +depCount)
  uint32_t depCount = 0;
};

enum class CollType : uint8_t {
  kAllReduce,
  kBroadcast,
  kReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kSend,
  kRecv,
  kBarrier,
  kGather,     // root receives `count` elements from every rank (rank order)
  kScatter,    // root sends `count` elements to every rank
  kAllToAllv,  // per-peer counts and displacements (CollArgs::vcounts)
};
constexpr int kNumCollTypes = 12;
const char* collName(CollType c);  // "allreduce", "broadcast", ...

// What to build. Counts follow the C API: allreduce/broadcast/reduce `count` elements in total;
// allgather `count` per rank (sendcount); reducescatter `count` per rank (recvcount); alltoall
// `count` per peer; send/recv `count` to/from `peer`.
struct CollArgs {
  CollType coll = CollType::kAllReduce;
  uint64_t count = 0;
  DataType dtype = DataType::kFloat32;
  RedOp op = RedOp::kSum;  // kAvg is built as kSum; the caller divides afterwards
  int root = 0;
  int peer = -1;
  uint64_t chunkBytes = 512 * 1024;  // pipeline chunk
  // Channels for multi-channel algorithms (ring_rail): 0 = the builder's default (one per rank of
  // the smallest host); 1..kMaxChannels otherwise. Other builders ignore it.
  int channels = 0;
  bool inPlace = false;
  // kAllToAllv only: 4 * nranks element counts, laid out as sendcounts, sdispls, recvcounts,
  // rdispls (as MPI_Alltoallv). Owned by the caller for the duration of build().
  const uint64_t* vcounts = nullptr;
};

// Who takes part: this rank, the size, and per rank the host index (ranks on one host share it).
struct Group {
  int rank = 0;
  int nranks = 1;
  std::vector<int> hostOf;  // empty: every rank on its own host
};

constexpr int kMaxChannels = 64;

struct Schedule {
  int rank = 0;
  int nranks = 1;
  std::string algo;  // name of the algorithm that built it
  int channels = 1;  // Step::channel < channels
  std::vector<Step> steps;
  std::vector<uint32_t> deps;
  uint64_t scratchBytes = 0;
  uint16_t numBuffers = 3;

  // Appends a step with the given dependencies; returns its index.
  int add(const Step& s, std::initializer_list<int> dependsOn = {});
  int add(const Step& s, const std::vector<int>& dependsOn);
  int send(int peer, BufRef src, uint64_t bytes, std::initializer_list<int> dependsOn = {});
  int recv(int peer, BufRef dst, uint64_t bytes, std::initializer_list<int> dependsOn = {});
  int recvReduce(int peer, BufRef src, BufRef dst, uint64_t bytes,
                 std::initializer_list<int> dependsOn = {});
  int copy(BufRef src, BufRef dst, uint64_t bytes, std::initializer_list<int> dependsOn = {});
  int reduce(BufRef src, BufRef dst, uint64_t bytes, std::initializer_list<int> dependsOn = {});
  int hostAllReduce(BufRef src, BufRef dst, uint64_t bytes,
                    std::initializer_list<int> dependsOn = {});

  // Appends `other` for group operations: its deps are shifted, its send/recv slots (and any slot
  // >= 3) become new slots after ours, its scratch is placed after ours in slot 2. Returns the
  // slot that other's slot 0 became (its slot 1 is that + 1).
  uint16_t append(const Schedule& other);

  // Bytes this rank sends over the network.
  uint64_t bytesSent() const;
  std::string toString() const;
};

}  // namespace loom::sched
