// The call descriptor: what one collective call is (kind, count, datatype, op, root) and where it
// stands in the communicator's sequence of collective calls. Every message a call sends carries
// its descriptor (the shm ring's message header, every tcp piece header, the one-host direct
// path's slot), and each receiver compares it with its own call's: a mismatch (rank 0
// all-reduces 1000 floats, rank 1 1001; float32 against float64; roots or ops that differ; an
// all-reduce against a broadcast; a call one rank skipped) is an error that names both ranks and
// both calls, never a silent wrong answer or a wait until the timeout. docs/misuse.md.
//
// 24 bytes, plain data, the same layout on every rank of a job (it travels between processes).
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace loom {

struct CallDesc {
  uint64_t seq = 0;     // 1, 2, ... per communicator, counting collective calls (0: none yet)
  uint64_t count = 0;   // elements, as the caller passed them
  int32_t root = -1;    // rooted collectives only, else -1
  uint8_t coll = 0;     // sched::CollType
  uint8_t dtype = 0;    // DataType
  uint8_t op = 0xff;    // RedOp for reductions, else 0xff
  uint8_t checked = 0;  // 0: not compared (point-to-point, grouped calls, no descriptor)
};
static_assert(sizeof(CallDesc) == 24, "CallDesc travels on the wire");

// The same call (seq included). Unchecked descriptors match anything.
inline bool sameCall(const CallDesc& a, const CallDesc& b) {
  if (!a.checked || !b.checked) return true;
  return a.seq == b.seq && a.count == b.count && a.root == b.root && a.coll == b.coll &&
         a.dtype == b.dtype && a.op == b.op;
}

// "allreduce(count=1000, float32, sum)", "broadcast(count=8, int32, root=1)", "barrier()".
std::string describeCall(const CallDesc& d);

// Error messages about mismatched calls start with this, and those about a payload whose checksum
// (LOOM_CHECKSUM) did not match with kCorruptMessage: after either, a rank gives up on the
// communicator and tells its peers why (api/calls.cc).
inline constexpr const char* kCallMismatch = "call mismatch: ";
inline constexpr const char* kCorruptMessage = "corrupted message: ";

// kInvalidUsage: "call mismatch: rank 0 called allreduce(count=1000, float32, sum) but rank 1
// called allreduce(count=1001, float32, sum) (call #3 of both)"; `where` says how it was seen.
Status callMismatch(int rankA, const CallDesc& a, int rankB, const CallDesc& b, const char* where);

}  // namespace loom
