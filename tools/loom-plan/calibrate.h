// loom-plan --calibrate and --measure: all-reduce timed through loom itself on this machine.
//
// measureAllReduce forks `ranks` processes that open one communicator per candidate (each forced
// algorithm, and "" for the planner's own choice) over one transport, then time every candidate
// at every size in interleaved rounds (round r visits the candidates in a rotated order), so slow
// phases of a busy machine hit every candidate alike and process-start variance is gone.
//
// calibrate fits the cost model to such runs: the reduction rate of one core, shm/tcp alpha and
// beta (two ranks' recursive doubling: one exchange and one reduction per call), the machine's
// cores, then per (algorithm, transport) the terms of CostParams::AlgoFit (base latency,
// per-round overhead, per-round wake-up cost when ranks outnumber cores, bandwidth efficiency) by
// least squares on the relative error over 2, 4 and
// 8 rank runs of every algorithm at 8 B, 2 KiB, 64 KiB, 1 MiB and 16 MiB.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "plan/cost_model.h"

namespace loomplan {

struct MeasureSpec {
  int ranks = 2;
  std::string transport = "shm";  // shm or tcp
  std::vector<uint64_t> sizes;    // bytes (float32 elements: bytes / 4, at least 1)
  // Forced all-reduce algorithms; "planner": the planner's choice (nothing forced, the one-host
  // direct path off); "": the library as it is (nothing forced).
  std::vector<std::string> algos;
  int rounds = 5;
  std::string paramsFile;  // LOOM_PLAN_PARAMS=@file for every communicator ("" = environment)
};

struct Measured {
  // us[algo][size][round]: seconds per call (mean over ranks) x 1e6.
  std::vector<std::vector<std::vector<double>>> us;
  std::vector<std::string> choice;  // per size: the planner's decision (describe())
  double medianUs(size_t a, size_t s) const;
  double minUs(size_t a, size_t s) const;
};

loom::Status measureAllReduce(const MeasureSpec& spec, Measured* out);

// loom-plan --measure: every registered all-reduce algorithm forced, the planner's choice and (shm)
// the library as it is (its one-host direct path for small sizes), sizes min..max
// in x4 steps (and max), one JSON line per size on stdout. Returns the exit status.
int measureMain(const std::string& transport, int ranks, const std::string& minSize,
                const std::string& maxSize, int rounds, const std::string& paramsFile);

// With `verbose`, progress lines go to stderr.
loom::Status calibrate(loom::plan::CostParams* out, bool verbose);

}  // namespace loomplan
