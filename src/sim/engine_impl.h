// The simulator's engine (simulate() in engine.h), private to src/sim: engine.cc runs events,
// flows and steps; engine_compute.cc models the CPU work (reductions, CPU-performed copies) as
// flows on shared core links.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <queue>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sim/engine.h"
#include "sim/fold.h"
#include "sim/maxmin.h"

namespace loom::sim::detail {

using sched::OpKind;

// kEvReduce: a RecvReduce's data is in; its reduction starts (compute shared, not fused).
constexpr uint32_t kEvFlowEnd = 0, kEvStepDone = 1, kEvReduce = 2;
// A core's capacity in core-nanoseconds per second; work costing 1 / G ns per byte (G in GB/s)
// crosses a core with weight 1 / G.
constexpr double kCoreNsPerSec = 1e9;

struct Event {
  double t;
  uint32_t kind, a, b, ver;
  bool operator>(const Event& o) const { return t > o.t; }
};

struct PathRec {
  uint32_t off = 0, len = 0;
  double latency = 0;
  bool reduces = false;  // a transfer whose receiver reduces on the way (its core hop says so)
};

class Engine {
 public:
  Engine(const Net& net, const ScheduleSet& set, const std::vector<int>& rankGpu,
         const SimOptions& opt, SimResult* res)
      : net_(net),
        set_(set),
        rankGpu_(rankGpu),
        opt_(opt),
        res_(res),
        router_(&net, opt.routing, opt.seed) {}

  Status run();

 private:
  // Units: ranks, or rank classes of a folded run (represented by their smallest rank).
  int unitRank(int u) const { return folded_ ? fold_.rep[u] : u; }
  int unitOf(int rank) const { return folded_ ? fold_.classOf[rank] : rank; }
  int mult(int u) const { return folded_ ? fold_.size[u] : 1; }
  const Shape& unitShape(int u) const { return set_.shapeOfRank(unitRank(u)); }
  Status setUp();
  Status ready(int unit, uint32_t step);
  Status startFlow(int src, uint32_t sendStep, int dst, uint32_t recvStep, uint64_t bytes,
                   int32_t sendDelta);
  Status pathFor(int srcUnit, int32_t sendDelta, uint32_t* pathId);
  Status stepDone(int unit, uint32_t step);
  // Compute (SimOptions::computeShared).
  Status setUpCompute();
  void addCoreHops(int unit, double gbps, std::vector<PathHop>* hops) const;
  uint32_t addPath(std::vector<PathHop>* hops, double latency, bool reduces);
  uint32_t cpuPathFor(uint32_t netPath, int src, int dst, int32_t sendDelta, bool reduce);
  void startCompute(int unit, uint32_t step, uint64_t bytes, double gbps);
  Status deadlock() const;
  void flowEnd(uint32_t f);
  void push(double t, uint32_t kind, uint32_t a, uint32_t b, uint32_t ver = 0) {
    events_.push(Event{t, kind, a, b, ver});
  }
  // Message lists: per (shape, direction, peer delta), the steps in FIFO order (k-th = seq k).
  static uint64_t listKey(int shape, bool recv, int32_t delta) {
    return (static_cast<uint64_t>(shape) << 33) | (recv ? 1ull << 32 : 0) |
           static_cast<uint32_t>(delta);
  }
  void buildMessageLists();
  double opSeconds(uint64_t bytes, double gbps) const {
    return gbps > 0 ? static_cast<double>(bytes) / (gbps * 1e9) : 0.0;
  }

  const Net& net_;
  const ScheduleSet& set_;
  std::vector<int> rankGpu_;
  const SimOptions& opt_;
  SimResult* res_;
  Router router_;
  std::vector<PathHop> hops_;  // all paths' hops; PathRec and MaxMin index into it
  Folding fold_;
  bool folded_ = false;
  int units_ = 0;
  uint64_t unitSteps_ = 0;
  std::vector<double> cap_;       // solver links: the net's links, or link classes when folded
  std::vector<double> linkAcc_;   // bytes per solver link
  std::vector<double> unitDone_;  // per unit: last step done
  std::unique_ptr<MaxMin> mm_;
  double now_ = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  // Per unit per step: dependencies not yet done, or kWaiting: a ready Send/Recv whose partner
  // is not ready yet (the rendezvous; the partner is found through the message lists).
  std::vector<std::vector<uint16_t>> pending_;
  static constexpr uint16_t kWaiting = 0xffff;
  uint64_t stepsDone_ = 0;
  std::unordered_map<uint64_t, uint32_t> listOf_;  // listKey -> offset into lists_
  std::vector<uint32_t> lists_, listLen_;          // listLen_ indexed like lists_ offsets
  std::vector<PathRec> paths_;
  std::unordered_map<uint64_t, uint32_t> pathOfPair_;
  struct FlowInfo {
    int32_t src, dst;
    uint32_t sendStep, recvStep;
    uint64_t bytes;
    uint32_t path;
    uint64_t conn = kNoConn;  // its connection (a transfer), Folding::key(src, send delta)
  };
  static constexpr uint64_t kNoConn = ~0ull;
  void finish(int32_t src, uint32_t sendStep, int32_t dst, uint32_t recvStep, double latency,
              bool reduced);
  std::vector<FlowInfo> flowInfo_;  // indexed like MaxMin flow ids
  // Connections: one per (sender unit, send delta). Its messages go out one after another (FIFO,
  // as on loom's transports): a message that finds its connection busy waits in line and takes
  // over the flow when the one before it is out (same path: same rate, no new solve).
  std::unordered_map<uint64_t, uint32_t> connFlow_;  // busy connection -> its flow
  std::unordered_map<uint64_t, std::deque<FlowInfo>> connQueue_;
  void nextOnConnection(uint32_t f);
  // Compute: unit u's core(s) are solver link cpuBase_ + u, host h's shared cores hostBase_ + h;
  // per unit the hosts it has members on, with the member count (hostCores > 0 only).
  bool compute_ = false, cpuMoves_ = false, fused_ = false;
  uint32_t cpuBase_ = 0, hostBase_ = 0;
  std::vector<std::vector<std::pair<int32_t, int32_t>>> unitHosts_;
  std::vector<int64_t> computePath_;  // per unit x {reduce, copy}: path id (-1: not made yet)
  std::map<std::tuple<uint32_t, int32_t, int32_t, bool>, uint32_t> cpuPathOf_;
  std::unordered_map<uint64_t, int32_t> pairLink_;  // (src unit, send delta) -> link (pairGBps)
  std::vector<PathHop> tmpHops_;
};

// With host cores shared, a folded run is exact only when every host a class is on holds the same
// classes in the same numbers.
bool hostsAlike(const Net& net, const std::vector<int>& rankGpu, const Folding& f);

}  // namespace loom::sim::detail
