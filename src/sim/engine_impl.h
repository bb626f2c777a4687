// The simulator's engine (simulate() in engine.h), private to src/sim: engine.cc runs events,
// flows and steps; engine_connections.cc keeps each connection's messages in order and hands its
// flow from one message to the next; engine_compute.cc models the CPU work (reductions,
// CPU-performed copies) as flows on shared core links.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
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
#include "sim/huge_pages.h"
#include "sim/maxmin.h"

namespace loom::sim::detail {

using sched::OpKind;

// kEvReduce: a RecvReduce's data is in; its reduction starts (compute shared, not fused).
// kEvXferDone: a transfer's send and receive steps are both done (a, b: sender unit and step;
// ver, c: receiver unit and step).
constexpr uint32_t kEvFlowEnd = 0, kEvStepDone = 1, kEvReduce = 2, kEvXferDone = 3;
// A core's capacity in core-nanoseconds per second; work costing 1 / G ns per byte (G in GB/s)
// crosses a core with weight 1 / G.
constexpr double kCoreNsPerSec = 1e9;

struct Event {
  double t;
  uint32_t kind, a, b, ver, c;
  bool operator>(const Event& o) const { return t > o.t; }
};

// Open-addressing map from a 64-bit key to a 32-bit value (linear probing, no erase): the engine's
// look-ups per message, cheaper than std::unordered_map's node per entry.
class FlatMap {
 public:
  static constexpr uint32_t kNone = ~0u;
  uint32_t find(uint64_t key) const {
    if (size_ == 0) return kNone;
    for (size_t i = slot(key);; i = (i + 1) & mask_) {
      if (vals_[i] == kNone) return kNone;
      if (keys_[i] == key) return vals_[i];
    }
  }
  void set(uint64_t key, uint32_t val) {  // val != kNone
    if (2 * (size_ + 1) > keys_.size()) rehash(std::max<size_t>(16, 2 * keys_.size()));
    size_t i = slot(key);
    for (; vals_[i] != kNone; i = (i + 1) & mask_)
      if (keys_[i] == key) {
        vals_[i] = val;
        return;
      }
    keys_[i] = key;
    vals_[i] = val;
    ++size_;
  }

 private:
  size_t slot(uint64_t k) const {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return static_cast<size_t>(k) & mask_;
  }
  void rehash(size_t n) {
    std::vector<uint64_t> keys = std::move(keys_);
    std::vector<uint32_t> vals = std::move(vals_);
    keys_.assign(n, 0);
    vals_.assign(n, kNone);
    mask_ = n - 1;
    size_ = 0;
    for (size_t i = 0; i < keys.size(); ++i)
      if (vals[i] != kNone) set(keys[i], vals[i]);
  }
  std::vector<uint64_t> keys_;
  std::vector<uint32_t> vals_;
  size_t size_ = 0, mask_ = 0;
};

struct PathRec {
  uint32_t off = 0, len = 0;
  double latency = 0;
  bool reduces = false;  // a transfer whose receiver reduces on the way (its core hop says so)
  double bytes = 0;      // carried so far (whole bytes: exact), spread over the links at the end
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
  bool bundleViolated() const { return router_.bundleViolated(); }
  // The run deadlocked without per-step counts: run again with them to name the step.
  bool needsTracking() const { return deadlocked_ && !track_; }

 private:
  // Units: ranks, or rank classes of a folded run (represented by their smallest rank).
  int unitRank(int u) const { return folded_ ? fold_.rep[u] : u; }
  int unitOf(int rank) const { return folded_ ? fold_.classOf[rank] : rank; }
  int mult(int u) const { return folded_ ? fold_.size[u] : 1; }
  const Shape& unitShape(int u) const { return set_.shapeOfRank(unitRank(u)); }
  // Step i of unit u's shape, and its dependents, from the engine's copies of the shapes.
  const SimStep& stepOf(int u, uint32_t i) const { return steps_[stepBase_[u] + i]; }
  std::vector<SimStep, HugePageAllocator<SimStep>> steps_;
  std::vector<uint32_t, HugePageAllocator<uint32_t>> next_;
  std::vector<uint32_t> stepBase_, nextBase_;
  Status setUp();
  Status ready(int unit, uint32_t step);
  Status startFlow(int src, uint32_t sendStep, int dst, uint32_t recvStep, uint64_t bytes,
                   int32_t sendDelta, uint32_t conn);
  Status pathFor(int srcUnit, int32_t sendDelta, uint32_t* pathId);
  Status stepDone(int unit, uint32_t step);
  // Compute (SimOptions::computeShared).
  Status setUpCompute();
  void addCoreHops(int unit, double gbps, std::vector<PathHop>* hops) const;
  uint32_t addPath(std::vector<PathHop>* hops, double latency, bool reduces);
  // `recv`: the receiving step (a fused RecvReduce costs the receiver its reduction rate).
  uint32_t cpuPathFor(uint32_t netPath, int src, int dst, int32_t sendDelta, const SimStep& recv);
  // `kind`: what runs on the core (its path is kept per unit and kind).
  void startCompute(int unit, uint32_t step, uint64_t bytes, double gbps, int kind);
  enum : int { kComputeReduce, kComputeCopy, kComputeReduceInPlace, kComputeKinds };
  // A reduction step's rate after its transfer, or fused into it on the receiver's core, and its
  // compute kind (SimStep::inPlace: the in-place rates where given).
  double reduceRate(const SimStep& st) const {
    return st.inPlace && opt_.reduceInPlaceGBps > 0 ? opt_.reduceInPlaceGBps : opt_.reduceGBps;
  }
  double recvReduceRate(const SimStep& st) const {
    return st.inPlace && opt_.recvReduceInPlaceCoreGBps > 0 ? opt_.recvReduceInPlaceCoreGBps
                                                            : opt_.recvReduceCoreGBps;
  }
  static int reduceKind(const SimStep& st) {
    return st.inPlace ? kComputeReduceInPlace : kComputeReduce;
  }
  Status deadlock() const;
  void flowEnd(uint32_t f);
  // An event at now_ + d1 + d2. Events a fixed delay ahead come in time order (now_ never goes
  // back), so each delay pair seen has a FIFO instead of the heap (up to kMaxFifos pairs).
  void after(double d1, double d2, uint32_t kind, uint32_t a, uint32_t b, uint32_t ver = 0,
             uint32_t c = 0);
  // The earliest pending event (heap or FIFO), false if none; takeEvent removes it.
  bool nextEvent(double* t, int* from) const;
  Event takeEvent(int from);
  struct Fifo {
    double d1, d2;
    std::vector<Event> ev;
    size_t head = 0;
  };
  static constexpr size_t kMaxFifos = 16, kPrefetch = 8;
  std::vector<Fifo> fifos_;
  // The non-empty FIFOs by their first event's time (ties: the lower index first, the order a
  // scan over the FIFOs would give), so that finding the next event does not scan them all.
  struct FifoHead {
    double t;
    uint32_t fifo;
    bool operator>(const FifoHead& o) const { return t > o.t || (t == o.t && fifo > o.fifo); }
  };
  QuadHeap<FifoHead> fifoHeads_;
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
  std::vector<std::vector<double>> traceStart_, traceEnd_;  // per unit, per step (traceSteps)
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  // Flow ends (most of the events that are not a fixed delay ahead), in a heap of small entries.
  struct FlowEndEvent {
    double t;
    uint32_t flow, ver;
    bool operator>(const FlowEndEvent& o) const { return t > o.t; }
  };
  RadixHeap<FlowEndEvent> ends_;  // flow ends come at or after now_
  // Per unit per step: dependencies not yet done, or kWaiting: a ready Send/Recv whose partner
  // is not ready yet (the rendezvous; the partner is found through the message lists).
  // Kept for every step only when tracking (SimOptions::trackSteps); else only steps with two or
  // more dependencies have a count (multi_, unit u's from multiOff_[u], the shape's steps numbered
  // by multiIdx_), and a waiting step that went out of order on its connection has its bit set in
  // oooBits_ (unit u's steps from pendingOff_[u]): 1 bit instead of 16 per step.
  std::vector<uint16_t, HugePageAllocator<uint16_t>> pending_;  // unit u's from pendingOff_[u]
  std::vector<uint64_t> pendingOff_;
  uint16_t& pending(int unit, uint32_t step) { return pending_[pendingOff_[unit] + step]; }
  uint16_t pending(int unit, uint32_t step) const { return pending_[pendingOff_[unit] + step]; }
  static constexpr uint16_t kWaiting = 0xffff;
  bool track_ = false;
  std::vector<uint16_t> multi_;
  std::vector<uint64_t> multiOff_;
  std::vector<std::vector<uint32_t>> multiIdx_;  // per shape per step (kNoConn: fewer deps)
  std::vector<uint64_t, HugePageAllocator<uint64_t>> oooBits_;
  // One more dependency of the step is done; true when it was the last.
  bool depDone(int unit, uint32_t step) {
    if (track_) return --pending(unit, step) == 0;
    if (stepOf(unit, step).depCount <= 1) return true;
    return --multi_[multiOff_[unit] + multiIdx_[unitShapeId(unit)][step]] == 0;
  }
  // A ready Send/Recv waits for its partner (inOrder: it came in order on its connection's side,
  // so the side's count says so and no mark is needed).
  void markWaiting(int unit, uint32_t step, bool inOrder) {
    if (track_) {
      pending(unit, step) = kWaiting;
    } else if (!inOrder) {
      const uint64_t i = pendingOff_[unit] + step;
      oooBits_[i >> 6] |= uint64_t{1} << (i & 63);
    }
  }
  bool isWaiting(int unit, uint32_t step) const {
    if (track_) return pending(unit, step) == kWaiting;
    const uint64_t i = pendingOff_[unit] + step;
    return (oooBits_[i >> 6] >> (i & 63)) & 1;
  }
  // Only called when the step's side went out of order (else its bit was never set).
  void clearWaiting(int unit, uint32_t step) {
    if (track_) {
      pending(unit, step) = 0;
      return;
    }
    const uint64_t i = pendingOff_[unit] + step;
    oooBits_[i >> 6] &= ~(uint64_t{1} << (i & 63));
  }
  Status setUpDependencies();
  Status copySteps();
  uint64_t stepsDone_ = 0;
  bool deadlocked_ = false;
  FlatMap listOf_;                 // listKey -> offset into lists_
  std::vector<uint32_t> lists_;    // steps
  std::vector<uint32_t> listLen_;  // indexed like lists_ offsets
  std::vector<PathRec> paths_;
  FlatMap pathOfPair_;
  struct FlowInfo {
    int32_t src, dst;
    uint32_t sendStep, recvStep;
    uint64_t bytes;
    uint32_t path;
    uint32_t conn = kNoConn;  // its connection (a transfer; conns_ index)
  };
  static constexpr uint32_t kNoConn = ~0u;
  void finish(int32_t src, uint32_t sendStep, int32_t dst, uint32_t recvStep, double latency,
              bool reduced);
  std::vector<FlowInfo, HugePageAllocator<FlowInfo>> flowInfo_;  // indexed like MaxMin flow ids
  // Connections: one per (sender unit, send delta). Its messages go out one after another (FIFO,
  // as on loom's transports): a message that finds its connection busy waits in line and takes
  // over the flow when the one before it is out (same path: same rate, no new solve).
  // Connections: one per (sender unit, send delta), conns_[connBase_[unit] + slot] for a send
  // step's SimStep::slot; a receive step's is inConn_[inBase_[unit] + slot] (kNoConn: nobody
  // sends to it). Each has its path (once routed; kNoConn: not yet), its flow (kNoConn: none) and
  // its queue, a list through queued_ (free entries in freeQueued_). One cache line each.
  struct alignas(64) Conn {
    uint32_t path = kNoConn, flow = kNoConn, head = kNoConn, tail = kNoConn;
    uint32_t ready[2] = {0, 0};  // sends, receives: messages 0..n-1 of the side have been ready
    bool outOfOrder[2] = {false, false};  // ...and one after them too
    bool idle = false;      // its flow's message is out, nothing queued (until releaseIdle)
    bool parked = false;    // then its flow stays parked for its next message (mm_->park)
    uint32_t messages = 0;  // sent on it in all (the length of its send list)
    // Queued first, before the listed ones: a run of messages in order, seq runSeq on, as
    // runCount entries of the sender's and the receiver's message lists (runs_).
    uint32_t runSeq = 0, runCount = 0;
    // The sender's and the receiver's message lists (lists_ offsets; recvList kNoConn: the
    // receiver has none, recvLen entries), the two units and the send delta.
    uint32_t sendList = kNoConn, recvList = kNoConn, recvLen = 0;
    int32_t src = 0, dst = 0, delta = 0;
  };
  std::vector<uint32_t> inBase_, inConn_;
  struct Queued {
    FlowInfo info;
    uint32_t next = kNoConn;
  };
  std::vector<Conn, HugePageAllocator<Conn>> conns_;
  std::vector<uint32_t> connBase_;
  void buildConnections();
  int unitShapeId(int u) const { return set_.shapeIdOfRank(unitRank(u)); }
  std::vector<Queued> queued_;
  std::vector<uint32_t> freeQueued_;
  void enqueue(uint32_t conn, const FlowInfo& fi, uint32_t seq);
  bool runs_ = false;
  void nextOnConnection(uint32_t f);
  void takeOver(uint32_t f, const FlowInfo& next);  // next goes out on flow f's connection
  void releaseIdle();                               // flows of idle connections end
  std::vector<uint32_t> idleConns_;
  // Compute: unit u's core(s) are solver link cpuBase_ + u, host h's shared cores hostBase_ + h;
  // per unit the hosts it has members on, with the member count (hostCores > 0 only).
  bool compute_ = false, cpuMoves_ = false, fused_ = false;
  uint32_t cpuBase_ = 0, hostBase_ = 0;
  std::vector<std::vector<std::pair<int32_t, int32_t>>> unitHosts_;
  std::vector<int64_t> computePath_;  // per unit x compute kind: path id (-1: not made yet)
  std::map<std::tuple<uint32_t, int32_t, int32_t, int>, uint32_t> cpuPathOf_;
  std::unordered_map<uint64_t, int32_t> pairLink_;  // (src unit, send delta) -> link (pairGBps)
  std::vector<PathHop> tmpHops_;
  // SimOptions::busySlowdown (unfolded): per host the busy ranks when last counted.
  // updateBusy() counts them and sets the host links' capacities; true when one changed.
  bool busyOn_ = false;
  std::vector<double> hostBusy_, busyCount_;
  Status setUpBusy();
  double busyFactor(double k) const;
  bool updateBusy();
};

// With host cores shared, a folded run is exact only when every host a class is on holds the same
// classes in the same numbers.
bool hostsAlike(const Net& net, const std::vector<int>& rankGpu, const Folding& f);

}  // namespace loom::sim::detail
