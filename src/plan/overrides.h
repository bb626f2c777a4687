// User overrides of the planner's choice.
//   LOOM_ALGO = "allreduce:ring;broadcast:binomial"  one algorithm per collective ("," also
//                separates entries when each names its collective).
//   LOOM_TUNE = "allreduce:0-64k:rd,64k-inf:ring;allgather:0-inf:rd"  byte ranges [lo, hi) per
//                collective, first match wins; sizes take k, m, g (powers of 1024) or "inf".
// Bytes are nccl-tests' size: count x dtype size for allreduce, broadcast and reduce, the whole
// receive (allgather) or send (reducescatter) buffer for the others.
// An algorithm may name its rank ordering too: "allreduce:ring/rank" (the user's rank order) or
// "allreduce:ring/topo" (topology order: group, leaf, host); without one the planner picks it.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "sched/schedule.h"

namespace loom::plan {

struct TuneRange {
  sched::CollType coll;
  uint64_t lo = 0, hi = ~uint64_t{0};
  std::string algo;
  std::string order;  // "", "rank" or "topo"
};

struct Overrides {
  std::vector<TuneRange> forced;  // LOOM_ALGO: lo = 0, hi = inf
  std::vector<TuneRange> tune;    // LOOM_TUNE
  // Algorithm name for (coll, bytes), "" when none applies; `source` names the variable and
  // `order` gets the forced ordering ("" when the planner may choose).
  std::string lookup(sched::CollType coll, uint64_t bytes, std::string* source,
                     std::string* order = nullptr) const;
};

Status parseCollName(const std::string& s, sched::CollType* out);
Status parseSize(const std::string& s, uint64_t* out);  // "64k", "1m", "inf", "4096"
Status parseOverrides(const std::string& algo, const std::string& tune, Overrides* out);

}  // namespace loom::plan
