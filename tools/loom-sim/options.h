// loom-sim: command line, fabric loading and the size / algorithm lists.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "sched/schedule.h"
#include "sim/engine.h"
#include "sim/net.h"
#include "topo/topology.h"

namespace loom::simtool {

struct Options {
  std::string fabric, topoFile, ibnetFile;  // one of them
  sim::NodeParams node;
  std::string coll = "allreduce";
  std::string size = "1G";
  std::string sweep;  // "1M:4G" (x2 steps) or "1M:4G:4" (factor)
  std::string algos = "ring";
  int ranks = 0;  // 0: every GPU
  uint64_t chunkBytes = 512 * 1024;
  int channels = 1;  // NCCL-style channels (sim/channels.h)
  std::string routing = "spray";
  int seeds = 1;  // Monte Carlo over ECMP seeds
  sim::SimOptions sim;
  double coreGBps = 0;       // --core-gbps: SimOptions::sendCoreGBps and recvCoreGBps
  std::string busySlowdown;  // --busy-slowdown: SimOptions::busySlowdown ("K:F,...")
  double batchUs = 0;        // > 0: SimOptions::timeEpsilon in microseconds
  std::string fail;          // what-if spec (sim/whatif.h)
  uint64_t failSeed = 1;
  int top = 5;
  std::string plotDir;
  bool quiet = false;
  bool noBatch = false;  // SimOptions::timeEpsilon 0
  bool noFold = false;
  bool noBundle = false;
  std::string planParams;  // --plan-params: CostParams text over the simulated machine's
};

// Parses argv into `o`; returns false (and sets *rc) when the program should exit now.
bool parseArgs(int argc, char** argv, Options* o, int* rc);
Status parseSize(const std::string& s, uint64_t* out);
std::string sizeName(uint64_t bytes);
Status sizesOf(const Options& o, std::vector<uint64_t>* out);
Status loadTopology(const Options& o, topo::Topology* out);
Status parseColl(const std::string& s, sched::CollType* out);

}  // namespace loom::simtool
