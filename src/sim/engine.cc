#include "sim/engine.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <queue>
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

constexpr uint32_t kEvFlowEnd = 0, kEvStepDone = 1;

struct Event {
  double t;
  uint32_t kind, a, b, ver;
  bool operator>(const Event& o) const { return t > o.t; }
};

struct PathRec {
  uint32_t off = 0, len = 0;
  double latency = 0;
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
  Status deadlock() const;
  void flowEnd(uint32_t f);
  void push(double t, uint32_t kind, uint32_t a, uint32_t b, uint32_t ver = 0) {
    events_.push(Event{t, kind, a, b, ver});
  }
  // (sender unit, send delta, k) -> one 64-bit key: 21 + 21 + 22 bits (checked in run(), ready()).
  static uint64_t matchKey(int a, int b, uint32_t seq) {
    return (static_cast<uint64_t>(a) << 43) | (static_cast<uint64_t>(b) << 22) | seq;
  }
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
  std::vector<std::vector<uint16_t>> pending_;  // per unit per step: deps not yet done
  uint64_t stepsDone_ = 0;
  // Rendezvous: the ready half of message (src, delta, k) waiting for its partner. Value: recv
  // side flag (bit 63), unit (bits 32..62), step.
  std::unordered_map<uint64_t, uint64_t> waiting_;
  std::vector<PathRec> paths_;
  std::unordered_map<uint64_t, uint32_t> pathOfPair_;
  struct FlowInfo {
    int32_t src, dst;
    uint32_t sendStep, recvStep;
    uint64_t bytes;
    uint32_t path;
  };
  std::vector<FlowInfo> flowInfo_;  // indexed like MaxMin flow ids
};

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
  const PathRec& p = paths_[pid];
  res_->flows += mult(src);
  ++res_->solverFlows;
  if (bytes == 0 || p.len == 0) {  // nothing to share: only the latency
    push(now_ + p.latency, kEvStepDone, src, sendStep);
    const SimStep& r = unitShape(dst).steps[recvStep];
    double extra = r.op == OpKind::kRecvReduce ? opSeconds(r.bytes, opt_.reduceGBps) : 0.0;
    push(now_ + p.latency + extra, kEvStepDone, dst, recvStep);
    return Status();
  }
  uint32_t f = mm_->addFlow(p.off, p.len, static_cast<double>(bytes), now_);
  if (f >= flowInfo_.size()) flowInfo_.resize(f + 1);
  flowInfo_[f] = FlowInfo{src, dst, sendStep, recvStep, bytes, pid};
  return Status();
}

Status Engine::ready(int unit, uint32_t step) {
  const Shape& sh = unitShape(unit);
  const SimStep& st = sh.steps[step];
  int n = set_.nranks();
  switch (st.op) {
    case OpKind::kCopy:
      push(now_ + opSeconds(st.bytes, opt_.copyGBps), kEvStepDone, unit, step);
      return Status();
    case OpKind::kReduce:
      push(now_ + opSeconds(st.bytes, opt_.reduceGBps), kEvStepDone, unit, step);
      return Status();
    default:
      break;
  }
  bool isSend = st.op == OpKind::kSend;
  int rank = unitRank(unit);
  int peerRank = (rank + st.peerDelta) % n;
  int peer = unitOf(peerRank);
  int src = isSend ? unit : peer;
  int32_t sendDelta = isSend ? st.peerDelta : (n - st.peerDelta) % n;
  uint64_t key = matchKey(src, sendDelta, st.seq);
  if (st.seq >= (1u << 22))
    return invalidArgument("sim: rank ", rank, " step ", step,
                           ": more than 4M messages to one peer");
  auto it = waiting_.find(key);
  if (it != waiting_.end()) {
    uint32_t otherStep = static_cast<uint32_t>(it->second);
    const SimStep& o = unitShape(peer).steps[otherStep];
    if (o.bytes != st.bytes)
      return invalidArgument("sim: rank ", isSend ? rank : peerRank, " sends ",
                             isSend ? st.bytes : o.bytes, " bytes to rank ",
                             isSend ? peerRank : rank, " (message ", st.seq, ") but it receives ",
                             isSend ? o.bytes : st.bytes);
    waiting_.erase(it);
    return isSend ? startFlow(unit, step, peer, otherStep, st.bytes, sendDelta)
                  : startFlow(peer, otherStep, unit, step, st.bytes, sendDelta);
  }
  uint64_t v = (isSend ? 0ull : 1ull << 63) | (static_cast<uint64_t>(unit) << 32) | step;
  waiting_.emplace(key, v);
  return Status();
}

void Engine::flowEnd(uint32_t f) {
  const FlowInfo& fi = flowInfo_[f];
  const PathRec& p = paths_[fi.path];
  for (uint32_t i = 0; i < p.len; ++i) {
    const PathHop& h = hops_[p.off + i];
    linkAcc_[h.link] += static_cast<double>(fi.bytes) * h.weight;
  }
  mm_->removeFlow(f, now_);
  push(now_ + p.latency, kEvStepDone, fi.src, fi.sendStep);
  const SimStep& r = unitShape(fi.dst).steps[fi.recvStep];
  double extra = r.op == OpKind::kRecvReduce ? opSeconds(r.bytes, opt_.reduceGBps) : 0.0;
  push(now_ + p.latency + extra, kEvStepDone, fi.dst, fi.recvStep);
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
      if (pending_[u][i] == 0) continue;
      // The first step still waiting: name the dependency that never finished.
      const SimStep& st = sh.steps[i];
      int r = unitRank(u);
      return invalidUsage("sim: deadlock: ", stepsDone_, " of ", unitSteps_, " steps done; rank ",
                          r, " step ", i, " (", sched::opKindName(st.op), ", peer ",
                          (r + st.peerDelta) % n, ") still waits for ", pending_[u][i],
                          " dependencies");
    }
  }
  for (const auto& kv : waiting_) {
    int rank = unitRank(static_cast<int>((kv.second >> 32) & 0x7fffffff));
    uint32_t step = static_cast<uint32_t>(kv.second);
    const SimStep& st = set_.shapeOfRank(rank).steps[step];
    return invalidUsage("sim: deadlock: rank ", rank, " step ", step, " (",
                        sched::opKindName(st.op), " ", st.bytes, " bytes, peer ",
                        (rank + st.peerDelta) % n, ", message ", st.seq, ") has no partner");
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
  mm_ = std::make_unique<MaxMin>(&cap_, &hops_);
  linkAcc_.assign(cap_.size(), 0.0);
  unitDone_.assign(units_, 0.0);
  waiting_.reserve(4 * static_cast<size_t>(units_));
  pending_.resize(units_);
  for (int u = 0; u < units_; ++u) {
    const Shape& sh = unitShape(u);
    unitSteps_ += sh.steps.size();
    pending_[u].resize(sh.steps.size());
    for (size_t i = 0; i < sh.steps.size(); ++i) {
      if (sh.steps[i].depCount > 65535) return invalidArgument("sim: step with > 65535 deps");
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
