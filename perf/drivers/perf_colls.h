// The table of collectives the perf drivers run: sizes, bus-bandwidth factors (as nccl-tests),
// buffer placement for out-of-place and in-place runs, inputs and the exact expected outputs.
#pragma once

#include <cstddef>
#include <string>

#include "loom/loom.h"

namespace loom::perf {

enum class CollKind {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv
};

struct CollInfo {
  CollKind kind;
  const char* name;      // "all_reduce": the driver is <name>_perf
  const char* algoName;  // collective name in LOOM_ALGO ("allreduce")
  bool reduces;          // takes a redop
  bool rooted;           // takes a root
  bool inPlace;          // has an in-place form
};

const CollInfo* findColl(const std::string& name);  // by name or "<name>_perf"; nullptr if unknown
const CollInfo* collTable(int* count);

// Sizes of one row for `bytes` (the -b..-e size, nccl-tests' meaning: the larger buffer).
struct CollSizes {
  size_t count = 0;      // the API count argument (per rank for allgather/reducescatter/alltoall)
  size_t sendCount = 0;  // elements in the send buffer
  size_t recvCount = 0;  // elements in the receive buffer
  size_t sizeBytes = 0;  // max(send, recv) bytes, the "size" column
  double algBytes = 0;   // bytes that algbw divides by time
};
CollSizes collSizes(const CollInfo& c, size_t bytes, size_t typeSize, int nranks);
double busFactor(const CollInfo& c, int nranks);

// One call's arguments, the same for every backend.
struct CollCall {
  const CollInfo* coll = nullptr;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;
  loomDataType_t dt = loomFloat32;
  loomRedOp_t op = loomSum;
  int root = 0;
  int rank = 0;
  int nranks = 1;
  bool inPlace = false;
  size_t msgCount = 0;    // sendrecv: elements per message (0: the whole buffer in one)
  bool lockstep = false;  // sendrecv: each message its own group (done before the next)
  bool pairwise = false;  // sendrecv: send to and receive from rank ^ 1 (not next / prev)
};

// sendrecv's peers: the rank this one sends to and the one it receives from (the next and the
// previous rank, or --pairwise's partner rank ^ 1 both ways).
inline int sendrecvTo(const CollCall& c) {
  return c.pairwise ? c.rank ^ 1 : (c.rank + 1) % c.nranks;
}
inline int sendrecvFrom(const CollCall& c) {
  return c.pairwise ? c.rank ^ 1 : (c.rank - 1 + c.nranks) % c.nranks;
}

// Points call.send / call.recv into the two buffers (in place: both into recvBase, at the
// offsets NCCL defines). Both buffers hold at least max(send, recv) bytes.
void placeBuffers(CollCall* call, const CollSizes& sizes, char* sendBase, char* recvBase);

// Poisons the output and writes this rank's inputs, ready for one checked call.
void fillInputs(const CollCall& call, const CollSizes& sizes);

// Number of output elements of this rank that differ from the exact expected value.
size_t countWrong(const CollCall& call, const CollSizes& sizes);

}  // namespace loom::perf
