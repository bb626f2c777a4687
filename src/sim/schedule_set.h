// The schedules of all ranks in the compact form the simulator runs: per step only what costs time
// (op, peer, bytes, dependencies). Peers are stored relative to the rank ((peer - rank) mod n) and
// identical per-rank schedules are kept once, so a ring's 16,384 schedules are one shape in memory.
// Buffer offsets are dropped: they never change a step's time.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "sched/schedule.h"

namespace loom::sim {

struct SimStep {
  sched::OpKind op = sched::OpKind::kCopy;
  // RecvReduce / Reduce whose local operand is its destination (dst = dst (op) x: a two-operand
  // reduction, which a CPU runs faster than dst = src (op) x; SimOptions::reduceInPlaceGBps).
  bool inPlace = false;
  int32_t peerDelta = 0;  // (peer - rank) mod nranks
  uint32_t seq = 0;       // k: this is the k-th send to (or recv from) that peer
  uint32_t slot = 0;      // Send (Recv): index of its peerDelta among the shape's send (receive)
                          // deltas, in order of first use
  uint64_t bytes = 0;
  uint32_t depBegin = 0, depCount = 0;    // into Shape::deps
  uint32_t nextBegin = 0, nextCount = 0;  // dependents, into Shape::next
};

struct Shape {
  std::vector<SimStep> steps;
  std::vector<uint32_t> deps;
  std::vector<uint32_t> next;
  uint64_t hash = 0;
};

class ScheduleSet {
 public:
  explicit ScheduleSet(int nranks) : nranks_(nranks), shapeOf_(nranks, -1) {}
  int nranks() const { return nranks_; }
  // Adds rank s.rank's schedule (checked: peers in range, deps point backwards); `built`: it came
  // from the builder (false: derived from another rank's, see buildScheduleSet).
  Status add(const sched::Schedule& s, bool built = true);
  // Rank `rank` runs the same shape as rank `like` (already added), without building it.
  Status addSameAs(int rank, int like);
  // Every rank has a schedule.
  Status complete() const;
  bool has(int rank) const { return shapeOf_[rank] >= 0; }
  int built() const { return built_; }  // schedules built and added (not derived, not addSameAs)
  const Shape& shapeOfRank(int r) const { return shapes_[shapeOf_[r]]; }
  int shapeIdOfRank(int r) const { return shapeOf_[r]; }
  const Shape& shape(int id) const { return shapes_[id]; }
  int numShapes() const { return static_cast<int>(shapes_.size()); }
  uint64_t totalSteps() const { return totalSteps_; }
  std::string algo;
  // The schedules are of an in-place call (CollArgs::inPlace: the send and receive buffers are
  // one), so a reduction whose local operand is at the same offset of the send buffer as its
  // destination in the receive buffer is in place (SimStep::inPlace). Set before adding;
  // buildScheduleSet sets it from its CollArgs.
  bool callInPlace = false;

 private:
  int nranks_;
  std::vector<int32_t> shapeOf_;
  std::vector<Shape> shapes_;
  std::unordered_multimap<uint64_t, int32_t> byHash_;
  uint64_t totalSteps_ = 0;
  int built_ = 0;
};

using RankBuildFn =
    std::function<Status(const sched::CollArgs&, const sched::Group&, sched::Schedule*)>;
// Every rank's schedule built with `build` (hostOf as in sched::Group), into `out`.
//
// Symmetry shortcut (`symmetric`, on by default): most builders give rank r + P the shape of rank
// r for a period P of 1 (a ring: all ranks alike) or of the ranks per host (hier: ranks with the
// same local index), when every host holds the same number of consecutive ranks. Building all p
// schedules of a ring is O(p^2) steps (16,384 ranks: 537 M), so the period is found and checked
// instead: ranks 0..P-1 are built, then the last P ranks and 64 ranks spread over the rest; if
// every one of them has the shape of its class (r mod P), the other ranks take that shape without
// being built; at the first that does not, every rank is built. Rings whose segments differ in
// size (count not a multiple of p), trees and butterflies show it in their first ranks and are
// built in full. Tests compare the result with the full build.
//
// Without a period, plans that treat a host's GPUs alike (hier_tree: GPU j of every host runs the
// same tree across hosts on its rail, and a ring inside the host) give rank h * B + j the schedule
// of rank h * B with every peer's index inside its host moved by j (mod B, the ranks per host).
// When that holds for every GPU of 18 probed hosts (the first, the last, 16 spread), only the
// first GPU of each host is built and the others take its schedule rotated (B times fewer builder
// calls); else every rank is built. The set's callInPlace is args.inPlace.
Status buildScheduleSet(const RankBuildFn& build, const sched::CollArgs& args, int nranks,
                        const std::vector<int>& hostOf, ScheduleSet* out, bool symmetric = true);

}  // namespace loom::sim
