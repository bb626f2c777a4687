// nccl-tests' output: header, one row per size (out-of-place, then in-place), the closing
// "Avg bus bandwidth" line, and optionally one JSON object per row (-J).
#pragma once

#include <cstdio>
#include <string>

#include "perf_args.h"
#include "perf_colls.h"
#include "perf_coord.h"

namespace loom::perf {

struct PlacementResult {
  bool na = true;  // not run (why says why)
  std::string why;
  double timeUs = 0;  // mean over ranks of the per-iteration wall time
  // Per iteration, the CPU time of all ranks' processes together (user + system, every thread;
  // the kernel's work for a rank's sockets counts where the kernel ran it): JSON only.
  double cpuUs = 0;
  // The share of the host's CPU time that its hypervisor stole during the timed loop (/proc/stat's
  // steal column), in percent; the largest over the ranks' hosts; -1 where unknown: JSON only. A
  // VM whose vCPUs wait for the host measures its neighbours as much as the collective.
  double stealPct = -1;
  double algbw = 0;  // GB/s (1e9 B)
  double busbw = 0;
  long long wrong = -1;  // elements wrong summed over ranks; -1 when not checked (-c 0)
};

struct RowResult {
  size_t size = 0;
  size_t count = 0;
  loomDataType_t dt = loomFloat32;
  const char* redop = "none";
  int root = -1;
  PlacementResult oop, ip;
};

// Only rank 0 prints; every rank must call the methods (the header gathers pids and hosts).
class Report {
 public:
  Report(const Options& opts, const CollInfo& coll, const char* backend, Coord& coord);
  ~Report();
  bool ok() const { return jsonError_.empty(); }
  const std::string& error() const { return jsonError_; }
  void header();
  void row(const RowResult& r);
  // Prints the footer; returns the number of wrong elements seen (all rows, all ranks).
  long long footer();

 private:
  void printPlacement(const PlacementResult& p);
  void jsonPlacement(const PlacementResult& p);

  const Options& opts_;
  const CollInfo& coll_;
  std::string backend_;
  Coord& coord_;
  bool printing_;
  std::FILE* json_ = nullptr;
  std::string jsonError_;
  double busbwSum_ = 0;
  int busbwCount_ = 0;
  long long wrong_ = 0;
};

}  // namespace loom::perf
