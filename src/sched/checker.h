// In-memory checker: runs every rank's Schedule together without a transport (messages are byte
// copies through per-pair FIFO queues), detecting mismatched sends/receives, deadlock, reads of
// out-of-range bytes, and wrong results.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/status.h"
#include "sched/schedule.h"

namespace loom::sched {

// buffers[r][slot] = base pointer of that rank's slot (scratch slot may be null: allocated here).
// bufferBytes[r][slot] = its size, used for bounds checks.
struct MemoryRun {
  std::vector<Schedule> schedules;
  std::vector<std::vector<uint8_t*>> buffers;
  std::vector<std::vector<uint64_t>> bufferBytes;
  DataType dtype = DataType::kFloat32;
  RedOp op = RedOp::kSum;
};
Status runInMemory(MemoryRun* run);

using BuildFn = std::function<Status(const CollArgs&, const Group&, Schedule*)>;

// Builds the schedules of all `nranks` ranks with `build`, fills inputs so the exact result is
// known (small integers, as nccl-tests), runs them in memory (out of place, or in place when
// args.inPlace) and compares every output element with the expected value. `group.hostOf` may give
// a host layout (empty: one rank per host). Errors say which rank/element differs.
Status checkCollective(const BuildFn& build, const CollArgs& args, int nranks,
                       const std::vector<int>& hostOf = {});

}  // namespace loom::sched
