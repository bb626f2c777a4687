// loom-plan --calibrate and --measure: all-reduce timed through loom itself on this machine.
//
// measureAllReduce forks `ranks` processes that open one communicator per candidate (each forced
// algorithm, and "" for the planner's own choice) over one transport, then time every candidate
// at every size in interleaved rounds (round r visits the candidates in a rotated order), so slow
// phases of a busy machine hit every candidate alike and process-start variance is gone.
//
// calibrate fits the cost model to such runs (its own, or --measure lines read back): the
// reduction rate of one core, the machine's cores, per transport (shm, tcp) the two-level
// per-message latency and the cache-dependent bandwidth (two ranks' recursive doubling: one
// exchange and one reduction per call, over every measured size; the eager and cache thresholds
// by a search over a grid), then per (algorithm, transport) the terms of CostParams::AlgoFit (base
// latency, per-round overhead, per-round wake-up cost when ranks outnumber cores, bandwidth
// efficiency) by least squares on the relative error over 2, 4 and 8 rank runs of every
// algorithm (and the one-host direct path). It also stores the tuning table (CostParams::tuned):
// the measured fastest algorithm per (transport, ranks, size bucket).
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "plan/cost_model.h"
#include "sched/schedule.h"

namespace loomplan {

struct MeasureSpec {
  int ranks = 2;
  std::string transport = "shm";  // shm or tcp
  std::vector<uint64_t> sizes;    // bytes (float32 elements: bytes / 4, at least 1)
  // Forced all-reduce algorithms ("direct": the one-host direct path, timed only up to
  // LOOM_SHM_DIRECT_BYTES); "planner": the library as it is (nothing forced: the planner chooses,
  // the direct path among its candidates, the tuning table where it holds); "model": the same
  // with the tuning table left out of the parameters (the cost model alone decides).
  std::vector<std::string> algos;
  int rounds = 5;
  std::string paramsFile;    // LOOM_PLAN_PARAMS=@file for every communicator ("" = environment)
  std::string modelFile;     // LOOM_PLAN_PARAMS=@file for "model" (paramsFile without tuned.*)
  uint64_t directBytes = 0;  // "direct" is timed at sizes up to this (LOOM_SHM_DIRECT_BYTES)
};

struct Measured {
  // us[algo][size][round]: seconds per call (mean over ranks) x 1e6; empty where not timed.
  std::vector<std::vector<std::vector<double>>> us;
  std::vector<std::string> choice;       // per size: the planner's decision (describe())
  std::vector<std::string> source;       // per size: its source (cost, tuned)
  std::vector<std::string> modelChoice;  // per size: the cost model's own decision
  double medianUs(size_t a, size_t s) const;
  double minUs(size_t a, size_t s) const;
};

loom::Status measureAllReduce(const MeasureSpec& spec, Measured* out);

// LOOM_SHM_DIRECT_BYTES as the library reads it (0: no direct path).
uint64_t directBytes();
// A float32 sum all-reduce of `bytes` (at least one element).
loom::sched::CollArgs allReduceArgs(uint64_t bytes);

// loom-plan --measure: every registered all-reduce algorithm forced, over shm the one-host direct
// path forced, and (unless forcedOnly) the planner's choice and the model's own choice, sizes
// min..max in x4 steps (and max), one JSON line per size on stdout; `only` (when not empty)
// keeps just those candidates. Returns the exit status.
int measureMain(const std::string& transport, int ranks, const std::string& minSize,
                const std::string& maxSize, int rounds, const std::string& paramsFile,
                bool forcedOnly, const std::vector<std::string>& only = {});

// What calibrate() measures itself (without --from-json): these rank counts over shm and tcp,
// every algorithm forced (and the direct path over shm), 8 B to maxBytes in x4 steps.
struct SelfMeasure {
  std::vector<int> ranks = {2, 4, 8};
  uint64_t maxBytes = 16u << 20;
  int rounds = 3;
};

// Calibrates from `fromJson` (files of --measure lines) or, when empty, from its own measurement
// (`self`). The reduction rate is measured on this core unless `reduceGBps` > 0 gives it. With
// `verbose`, progress and the fit's quality (measured against predicted for every point) go to
// stderr.
loom::Status calibrate(const std::vector<std::string>& fromJson, loom::plan::CostParams* out,
                       bool verbose, double reduceGBps = 0, const SelfMeasure& self = {});

}  // namespace loomplan
