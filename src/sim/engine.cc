#include "sim/engine.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "sim/fold.h"
#include "sim/maxmin.h"

namespace loom::sim {

double SimResult::utilisation(const Net& net, int link) const {
  if (seconds <= 0) return 0;
  return linkBytes[link] / (net.link(link).bytesPerSec * seconds);
}

namespace {

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

// Folded, a class's core link stands for each member's own core (weight per member), and a host's
// core link gets the weight of all the class's members on that host. That is exact when every host
// a class is on carries the same classes in the same numbers (checked in setUp; else no folding).
void Engine::addCoreHops(int unit, double gbps, std::vector<PathHop>* hops) const {
  const double w = 1.0 / gbps;
  hops->push_back({static_cast<int32_t>(cpuBase_ + unit), w});
  if (opt_.hostCores > 0)
    for (const auto& hc : unitHosts_[unit])
      hops->push_back({static_cast<int32_t>(hostBase_ + hc.first), w * hc.second});
}

uint32_t Engine::addPath(std::vector<PathHop>* hops, double latency, bool reduces) {
  // One hop per link (a flow within one class, or one host, crosses its core link once).
  std::sort(hops->begin(), hops->end(),
            [](const PathHop& a, const PathHop& b) { return a.link < b.link; });
  PathRec r;
  r.off = static_cast<uint32_t>(hops_.size());
  for (const PathHop& h : *hops) {
    if (hops_.size() > r.off && hops_.back().link == h.link)
      hops_.back().weight += h.weight;
    else
      hops_.push_back(h);
  }
  r.len = static_cast<uint32_t>(hops_.size()) - r.off;
  r.latency = latency;
  r.reduces = reduces;
  paths_.push_back(r);
  return static_cast<uint32_t>(paths_.size() - 1);
}

// A transfer the CPUs perform: its net path plus the sender's and the receiver's cores.
uint32_t Engine::cpuPathFor(uint32_t netPath, int src, int dst, int32_t sendDelta, bool reduce) {
  const auto key = std::make_tuple(netPath, src, dst, reduce);
  const bool cacheable = opt_.routing != RoutingMode::kUgal;
  if (cacheable) {
    auto it = cpuPathOf_.find(key);
    if (it != cpuPathOf_.end()) return it->second;
  }
  const PathRec base = paths_[netPath];
  tmpHops_.assign(hops_.begin() + base.off, hops_.begin() + base.off + base.len);
  if (opt_.sendCoreGBps > 0) addCoreHops(src, opt_.sendCoreGBps, &tmpHops_);
  const double recv = reduce ? opt_.recvReduceCoreGBps : opt_.recvCoreGBps;
  if (recv > 0) addCoreHops(dst, recv, &tmpHops_);
  // The pair's own link (folded: every member pair of the class path has one; weight 1 each).
  if (opt_.pairGBps > 0) tmpHops_.push_back({pairLink_.at(Folding::key(src, sendDelta)), 1.0});
  uint32_t id = addPath(&tmpHops_, base.latency, reduce);
  if (cacheable) cpuPathOf_[key] = id;
  return id;
}

// A Reduce or Copy of `bytes` at `gbps` per core, or a RecvReduce's reduction after its transfer.
void Engine::startCompute(int unit, uint32_t step, uint64_t bytes, double gbps) {
  if (!compute_ || bytes == 0 || gbps <= 0) {
    push(now_ + opSeconds(bytes, gbps), kEvStepDone, unit, step);
    return;
  }
  const size_t slot = 2 * static_cast<size_t>(unit) + (gbps == opt_.copyGBps ? 1 : 0);
  if (computePath_[slot] < 0) {
    tmpHops_.clear();
    addCoreHops(unit, gbps, &tmpHops_);
    computePath_[slot] = addPath(&tmpHops_, 0.0, false);
  }
  const uint32_t pid = static_cast<uint32_t>(computePath_[slot]);
  ++res_->computeFlows;
  uint32_t f = mm_->addFlow(paths_[pid].off, paths_[pid].len, static_cast<double>(bytes), now_);
  if (f >= flowInfo_.size()) flowInfo_.resize(f + 1);
  flowInfo_[f] = FlowInfo{unit, -1, step, 0, bytes, pid, kNoConn};
}

Status Engine::setUpCompute() {
  compute_ = opt_.computeShared;
  if (opt_.hostCores < 0 || opt_.sendCoreGBps < 0 || opt_.recvCoreGBps < 0 ||
      opt_.recvReduceCoreGBps < 0 || opt_.pairGBps < 0)
    return invalidArgument("sim: hostCores (", opt_.hostCores, "), sendCoreGBps (",
                           opt_.sendCoreGBps, "), recvCoreGBps (", opt_.recvCoreGBps,
                           "), recvReduceCoreGBps (", opt_.recvReduceCoreGBps, ") and pairGBps (",
                           opt_.pairGBps, ") must be >= 0");
  if (!compute_) return Status();
  cpuMoves_ = opt_.sendCoreGBps > 0 || opt_.recvCoreGBps > 0 || opt_.recvReduceCoreGBps > 0 ||
              opt_.pairGBps > 0;
  fused_ = opt_.recvReduceCoreGBps > 0;
  computePath_.assign(2 * static_cast<size_t>(units_), -1);
  cpuBase_ = static_cast<uint32_t>(cap_.size());
  cap_.resize(cap_.size() + units_, kCoreNsPerSec);
  if (opt_.pairGBps > 0) {
    for (int u = 0; u < units_; ++u)
      for (const SimStep& st : unitShape(u).steps)
        if (st.op == OpKind::kSend &&
            pairLink_.emplace(Folding::key(u, st.peerDelta), static_cast<int32_t>(cap_.size()))
                .second)
          cap_.push_back(opt_.pairGBps * 1e9);
  }
  if (opt_.hostCores <= 0) return Status();
  hostBase_ = static_cast<uint32_t>(cap_.size());
  cap_.resize(cap_.size() + net_.numHosts(), opt_.hostCores * kCoreNsPerSec);
  unitHosts_.assign(units_, {});
  for (int r = 0; r < set_.nranks(); ++r) {
    auto& v = unitHosts_[unitOf(r)];
    const int h = net_.hostOfGpu(rankGpu_[r]);
    auto it = std::find_if(v.begin(), v.end(), [h](const auto& e) { return e.first == h; });
    if (it == v.end())
      v.push_back({h, 1});
    else
      ++it->second;
  }
  return Status();
}

// With host cores shared, a folded run is exact only when every host a class is on holds the same
// classes in the same numbers (members of a class then see alike host loads).
bool hostsAlike(const Net& net, const std::vector<int>& rankGpu, const Folding& f) {
  std::vector<std::map<int32_t, int32_t>> onHost(net.numHosts());
  for (size_t r = 0; r < f.classOf.size(); ++r) ++onHost[net.hostOfGpu(rankGpu[r])][f.classOf[r]];
  std::vector<int32_t> first(f.rep.size(), -1);
  for (int h = 0; h < net.numHosts(); ++h) {
    for (const auto& kv : onHost[h]) {
      int32_t& q = first[kv.first];
      if (q < 0)
        q = h;
      else if (onHost[q] != onHost[h])
        return false;
    }
  }
  return true;
}

Status Engine::pathFor(int srcUnit, int32_t sendDelta, uint32_t* pathId) {
  if (folded_) {
    auto it = fold_.pathOf.find(Folding::key(srcUnit, sendDelta));
    if (it == fold_.pathOf.end())
      return internalError("sim: folded class ", srcUnit, " has no path for delta ", sendDelta);
    *pathId = it->second;
    return Status();
  }
  int src = rankGpu_[srcUnit];
  int dst = rankGpu_[(srcUnit + int64_t{sendDelta}) % set_.nranks()];
  uint64_t key = (static_cast<uint64_t>(src) << 32) | static_cast<uint32_t>(dst);
  bool cacheable = opt_.routing != RoutingMode::kUgal;
  if (cacheable) {
    auto it = pathOfPair_.find(key);
    if (it != pathOfPair_.end()) {
      *pathId = it->second;
      return Status();
    }
  }
  Path p;
  LOOM_CHECK(router_.route(src, dst, mm_->linkLoad(), &p));
  PathRec r;
  r.off = static_cast<uint32_t>(hops_.size());
  r.len = static_cast<uint32_t>(p.hops.size());
  hops_.insert(hops_.end(), p.hops.begin(), p.hops.end());
  r.latency = pathLatency(p, src == dst, opt_);
  *pathId = static_cast<uint32_t>(paths_.size());
  paths_.push_back(r);
  if (cacheable) pathOfPair_[key] = *pathId;
  return Status();
}

Status Engine::startFlow(int src, uint32_t sendStep, int dst, uint32_t recvStep, uint64_t bytes,
                         int32_t sendDelta) {
  uint32_t pid = 0;
  LOOM_CHECK(pathFor(src, sendDelta, &pid));
  res_->flows += mult(src);
  if (bytes == 0 || paths_[pid].len == 0) {  // nothing to share: only the latency
    ++res_->solverFlows;
    finish(src, sendStep, dst, recvStep, paths_[pid].latency, false);
    return Status();
  }
  if (cpuMoves_)
    pid = cpuPathFor(pid, src, dst, sendDelta,
                     fused_ && unitShape(dst).steps[recvStep].op == OpKind::kRecvReduce);
  const PathRec& p = paths_[pid];
  const uint64_t conn = Folding::key(src, sendDelta);
  auto busy = connFlow_.find(conn);
  if (busy != connFlow_.end()) {
    connQueue_[conn].push_back(FlowInfo{src, dst, sendStep, recvStep, bytes, pid, conn});
    return Status();
  }
  ++res_->solverFlows;
  uint32_t f = mm_->addFlow(p.off, p.len, static_cast<double>(bytes), now_);
  if (f >= flowInfo_.size()) flowInfo_.resize(f + 1);
  flowInfo_[f] = FlowInfo{src, dst, sendStep, recvStep, bytes, pid, conn};
  connFlow_[conn] = f;
  return Status();
}

// Flow f's message is out: the next one on its connection takes the flow over, or the flow ends.
void Engine::nextOnConnection(uint32_t f) {
  const uint64_t conn = flowInfo_[f].conn;
  auto q = connQueue_.find(conn);
  if (q == connQueue_.end() || q->second.empty()) {
    if (q != connQueue_.end()) connQueue_.erase(q);
    connFlow_.erase(conn);
    mm_->removeFlow(f, now_);
    return;
  }
  FlowInfo next = q->second.front();
  q->second.pop_front();
  if (next.path == flowInfo_[f].path) {
    flowInfo_[f] = next;
    double t = mm_->refill(f, static_cast<double>(next.bytes), now_);
    if (t < MaxMin::kInf) push(t, kEvFlowEnd, f, 0, mm_->version(f));
    return;
  }
  // Another path (UGAL, or a receive reduced by the CPU): a new flow.
  mm_->removeFlow(f, now_);
  ++res_->solverFlows;
  const PathRec& p = paths_[next.path];
  uint32_t g = mm_->addFlow(p.off, p.len, static_cast<double>(next.bytes), now_);
  if (g >= flowInfo_.size()) flowInfo_.resize(g + 1);
  flowInfo_[g] = next;
  connFlow_[conn] = g;
}

Status Engine::ready(int unit, uint32_t step) {
  const Shape& sh = unitShape(unit);
  const SimStep& st = sh.steps[step];
  int n = set_.nranks();
  switch (st.op) {
    case OpKind::kCopy:
      startCompute(unit, step, st.bytes, opt_.copyGBps);
      return Status();
    case OpKind::kReduce:
      startCompute(unit, step, st.bytes, opt_.reduceGBps);
      return Status();
    default:
      break;
  }
  bool isSend = st.op == OpKind::kSend;
  int rank = unitRank(unit);
  int peerRank = (rank + st.peerDelta) % n;
  int peer = unitOf(peerRank);
  int32_t back = (n - st.peerDelta) % n;  // the peer's delta to this rank
  int32_t sendDelta = isSend ? st.peerDelta : back;
  // The partner: the peer's seq-th message in the other direction with this rank.
  auto it = listOf_.find(listKey(set_.shapeIdOfRank(unitRank(peer)), isSend, back));
  if (it == listOf_.end() || st.seq >= listLen_[it->second] ||
      pending_[peer][lists_[it->second + st.seq]] != kWaiting) {
    pending_[unit][step] = kWaiting;  // partner not ready (or missing: reported as a deadlock)
    return Status();
  }
  uint32_t otherStep = lists_[it->second + st.seq];
  const SimStep& o = unitShape(peer).steps[otherStep];
  if (o.bytes != st.bytes)
    return invalidArgument("sim: rank ", isSend ? rank : peerRank, " sends ",
                           isSend ? st.bytes : o.bytes, " bytes to rank ", isSend ? peerRank : rank,
                           " (message ", st.seq, ") but it receives ", isSend ? o.bytes : st.bytes);
  pending_[peer][otherStep] = 0;
  return isSend ? startFlow(unit, step, peer, otherStep, st.bytes, sendDelta)
                : startFlow(peer, otherStep, unit, step, st.bytes, sendDelta);
}

void Engine::buildMessageLists() {
  std::unordered_map<uint64_t, std::vector<uint32_t>> tmp;
  for (int s = 0; s < set_.numShapes(); ++s) {
    const Shape& sh = set_.shape(s);
    for (size_t i = 0; i < sh.steps.size(); ++i) {
      const SimStep& st = sh.steps[i];
      bool recv = st.op == OpKind::kRecv || st.op == OpKind::kRecvReduce;
      if (st.op != OpKind::kSend && !recv) continue;
      tmp[listKey(s, recv, st.peerDelta)].push_back(static_cast<uint32_t>(i));
    }
  }
  for (auto& kv : tmp) {
    uint32_t off = static_cast<uint32_t>(lists_.size());
    listOf_[kv.first] = off;
    lists_.insert(lists_.end(), kv.second.begin(), kv.second.end());
    listLen_.resize(lists_.size(), 0);
    listLen_[off] = static_cast<uint32_t>(kv.second.size());
  }
}

void Engine::finish(int32_t src, uint32_t sendStep, int32_t dst, uint32_t recvStep, double latency,
                    bool reduced) {
  push(now_ + latency, kEvStepDone, src, sendStep);
  const SimStep& r = unitShape(dst).steps[recvStep];
  if (r.op != OpKind::kRecvReduce || reduced) {
    push(now_ + latency, kEvStepDone, dst, recvStep);
  } else if (compute_) {
    push(now_ + latency, kEvReduce, dst, recvStep);
  } else {
    push(now_ + latency + opSeconds(r.bytes, opt_.reduceGBps), kEvStepDone, dst, recvStep);
  }
}

void Engine::flowEnd(uint32_t f) {
  const FlowInfo fi = flowInfo_[f];
  const PathRec& p = paths_[fi.path];
  const double bytes = static_cast<double>(fi.bytes) * mm_->mult(f);
  for (uint32_t i = 0; i < p.len; ++i) {
    const PathHop& h = hops_[p.off + i];
    linkAcc_[h.link] += bytes * h.weight;
  }
  if (fi.dst < 0) {  // compute: the step is done
    mm_->removeFlow(f, now_);
    push(now_, kEvStepDone, fi.src, fi.sendStep);
    return;
  }
  finish(fi.src, fi.sendStep, fi.dst, fi.recvStep, p.latency, p.reduces);
  nextOnConnection(f);
}

Status Engine::stepDone(int unit, uint32_t step) {
  const Shape& sh = unitShape(unit);
  const SimStep& st = sh.steps[step];
  ++stepsDone_;
  if (now_ > unitDone_[unit]) unitDone_[unit] = now_;
  for (uint32_t k = 0; k < st.nextCount; ++k) {
    uint32_t nx = sh.next[st.nextBegin + k];
    if (--pending_[unit][nx] == 0) LOOM_CHECK(ready(unit, nx));
  }
  return Status();
}

Status Engine::deadlock() const {
  int n = set_.nranks();
  for (int u = 0; u < units_; ++u) {
    const Shape& sh = unitShape(u);
    for (size_t i = 0; i < sh.steps.size(); ++i) {
      if (pending_[u][i] == 0 || pending_[u][i] == kWaiting) continue;
      // The first step still waiting: name the dependency that never finished.
      const SimStep& st = sh.steps[i];
      int r = unitRank(u);
      return invalidUsage("sim: deadlock: ", stepsDone_, " of ", unitSteps_, " steps done; rank ",
                          r, " step ", i, " (", sched::opKindName(st.op), ", peer ",
                          (r + st.peerDelta) % n, ") still waits for ", pending_[u][i],
                          " dependencies");
    }
  }
  for (int u = 0; u < units_; ++u) {
    const Shape& sh = unitShape(u);
    for (size_t i = 0; i < sh.steps.size(); ++i) {
      if (pending_[u][i] != kWaiting) continue;
      const SimStep& st = sh.steps[i];
      int rank = unitRank(u);
      return invalidUsage("sim: deadlock: rank ", rank, " step ", i, " (", sched::opKindName(st.op),
                          " ", st.bytes, " bytes, peer ", (rank + st.peerDelta) % n, ", message ",
                          st.seq, ") has no partner");
    }
  }
  return invalidUsage("sim: deadlock: flows stalled at zero rate (a link of capacity 0?)");
}

Status Engine::setUp() {
  int n = set_.nranks();
  LOOM_CHECK(set_.complete());
  if (rankGpu_.empty()) {
    for (int r = 0; r < n; ++r) rankGpu_.push_back(r);
  }
  if (static_cast<int>(rankGpu_.size()) != n)
    return invalidArgument("sim: rankGpu has ", rankGpu_.size(), " entries for ", n, " ranks");
  for (int r = 0; r < n; ++r) {
    if (rankGpu_[r] < 0 || rankGpu_[r] >= net_.numGpus())
      return invalidArgument("sim: rank ", r, " placed on GPU ", rankGpu_[r], " but the net has ",
                             net_.numGpus(), " GPUs");
  }
  if (n >= (1 << 21)) return invalidArgument("sim: at most 2M ranks");
  if (opt_.fold && !opt_.exact) {
    LOOM_CHECK(foldRanks(net_, set_, rankGpu_, opt_, &fold_));
    folded_ = fold_.folded;
    res_->foldNote = fold_.note;
    if (folded_ && opt_.computeShared && opt_.hostCores > 0 && !hostsAlike(net_, rankGpu_, fold_)) {
      folded_ = false;
      res_->foldNote = "not folded: hosts whose shared cores carry different rank classes";
    }
  } else {
    res_->foldNote = "not folded: off";
  }
  if (folded_) {
    units_ = static_cast<int>(fold_.rep.size());
    res_->foldClasses = units_;
    cap_ = fold_.linkCap;
    hops_ = fold_.hops;
    for (const Folding::ClassPath& cp : fold_.paths) paths_.push_back({cp.off, cp.len, cp.latency});
  } else {
    units_ = n;
    cap_.resize(net_.numLinks());
    for (int l = 0; l < net_.numLinks(); ++l) cap_[l] = net_.link(l).bytesPerSec;
  }
  router_.setCachePaths(false);  // pathOfPair_ keeps them
  LOOM_CHECK(setUpCompute());
  mm_ = std::make_unique<MaxMin>(&cap_, &hops_);
  linkAcc_.assign(cap_.size(), 0.0);
  unitDone_.assign(units_, 0.0);
  buildMessageLists();
  pending_.resize(units_);
  for (int u = 0; u < units_; ++u) {
    const Shape& sh = unitShape(u);
    unitSteps_ += sh.steps.size();
    pending_[u].resize(sh.steps.size());
    for (size_t i = 0; i < sh.steps.size(); ++i) {
      if (sh.steps[i].depCount >= kWaiting)
        return invalidArgument("sim: step with more than ", kWaiting - 1, " dependencies");
      pending_[u][i] = static_cast<uint16_t>(sh.steps[i].depCount);
    }
  }
  return Status();
}

Status Engine::run() {
  LOOM_CHECK(setUp());
  for (int u = 0; u < units_; ++u) {
    const Shape& sh = unitShape(u);
    for (size_t i = 0; i < sh.steps.size(); ++i)
      if (sh.steps[i].depCount == 0) LOOM_CHECK(ready(u, static_cast<uint32_t>(i)));
  }
  auto emit = [this](uint32_t f, double t, uint32_t ver) {
    if (t < MaxMin::kInf) push(t, kEvFlowEnd, f, 0, ver);
  };
  for (;;) {
    int c = mm_->recompute(now_, opt_.exact || !opt_.components, emit);
    if (c > 0) {
      ++res_->recomputes;
      res_->recomputeFlows += c;
      res_->maxComponentFlows = std::max(res_->maxComponentFlows, c);
    }
    if (events_.empty()) break;
    // A batch is processed at the time of its first event: later events in it complete up to
    // timeEpsilon early (flows started in the batch all get rates from that instant).
    const double batchStart = events_.top().t;
    double batchEnd = batchStart + (opt_.exact ? 0.0 : opt_.timeEpsilon);
    ++res_->batches;
    bool any = false;
    while (!events_.empty() && events_.top().t <= batchEnd) {
      Event ev = events_.top();
      if (opt_.exact && any) break;
      events_.pop();
      if (ev.kind == kEvFlowEnd && (!mm_->active(ev.a) || mm_->version(ev.a) != ev.ver)) continue;
      now_ = std::max(now_, batchStart);
      any = true;
      ++res_->events;
      if (ev.kind == kEvFlowEnd) {
        flowEnd(ev.a);
      } else if (ev.kind == kEvReduce) {
        const SimStep& st = unitShape(static_cast<int>(ev.a)).steps[ev.b];
        startCompute(static_cast<int>(ev.a), ev.b, st.bytes, opt_.reduceGBps);
      } else {
        LOOM_CHECK(stepDone(static_cast<int>(ev.a), ev.b));
      }
    }
  }
  res_->seconds = now_;
  int n = set_.nranks();
  res_->rankSeconds.resize(n);
  for (int r = 0; r < n; ++r) res_->rankSeconds[r] = unitDone_[unitOf(r)];
  res_->linkBytes.assign(net_.numLinks(), 0.0);
  for (int l = 0; l < net_.numLinks(); ++l) {
    int s = folded_ ? fold_.linkClass[l] : l;
    if (s >= 0) res_->linkBytes[l] = linkAcc_[s];
  }
  if (stepsDone_ != unitSteps_) return deadlock();
  return Status();
}

}  // namespace

Status simulate(const Net& net, const ScheduleSet& set, const std::vector<int>& rankGpu,
                const SimOptions& opt, SimResult* out) {
  auto t0 = std::chrono::steady_clock::now();
  *out = SimResult();
  Engine e(net, set, rankGpu, opt, out);
  Status s = e.run();
  out->wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

}  // namespace loom::sim
