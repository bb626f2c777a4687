// One call for the planner (loom-plan --simulate) and tools: build every rank's schedule with a
// builder, run it on the net, and report time and nccl-tests bandwidths.
#pragma once

#include <vector>

#include "core/status.h"
#include "sim/engine.h"
#include "sim/net.h"
#include "sim/schedule_set.h"

namespace loom::sim {

struct CollectiveSim {
  double seconds = 0;
  double algbwGBps = 0;  // bytes / seconds
  double busbwGBps = 0;  // algbw x nccl-tests bus factor
  SimResult detail;
};

// `bytes` is nccl-tests' size (total for all-reduce/broadcast/reduce, all ranks' output for
// all-gather...), `args.count` must already match it. Ranks 0..nranks-1 run on GPUs 0..nranks-1
// unless rankGpu is given; hostOf is passed to the builder (empty: from the net's placement).
Status simulateCollective(const Net& net, const RankBuildFn& build, const sched::CollArgs& args,
                          uint64_t bytes, int nranks, const std::vector<int>& rankGpu,
                          const SimOptions& opt, CollectiveSim* out);

}  // namespace loom::sim
