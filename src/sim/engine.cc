#include "sim/engine.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <queue>
#include <unordered_map>

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
        router_(&net, opt.routing, opt.seed),
        mm_(net, &hops_) {}

  Status run();

 private:
  Status ready(int rank, uint32_t step);
  Status startFlow(int src, uint32_t sendStep, int dst, uint32_t recvStep, uint64_t bytes);
  Status pathFor(int src, int dst, uint32_t* pathId);
  Status stepDone(int rank, uint32_t step);
  Status deadlock() const;
  void flowEnd(uint32_t f);
  void push(double t, uint32_t kind, uint32_t a, uint32_t b, uint32_t ver = 0) {
    events_.push(Event{t, kind, a, b, ver});
  }
  // (src, dst, k) -> one 64-bit key: 21 + 21 + 22 bits (checked in run() and ready()).
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
  MaxMin mm_;
  double now_ = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  std::vector<std::vector<uint16_t>> pending_;  // per rank per step: deps not yet done
  uint64_t stepsDone_ = 0;
  // Rendezvous: the ready half of message (src, dst, k) waiting for its partner. Value: recv side
  // flag (bit 63), rank (bits 32..62), step.
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

Status Engine::pathFor(int src, int dst, uint32_t* pathId) {
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
  LOOM_CHECK(router_.route(src, dst, mm_.linkLoad(), &p));
  PathRec r;
  r.off = static_cast<uint32_t>(hops_.size());
  r.len = static_cast<uint32_t>(p.hops.size());
  hops_.insert(hops_.end(), p.hops.begin(), p.hops.end());
  if (src == dst) {
    r.latency = 0;
  } else if (p.nvlink) {
    r.latency = opt_.latNvlinkUs * 1e-6;
  } else if (p.intraNode) {
    r.latency = opt_.latPcieUs * 1e-6;
  } else {
    r.latency = (opt_.latNetUs + opt_.latHopUs * p.switchHops) * 1e-6;
  }
  *pathId = static_cast<uint32_t>(paths_.size());
  paths_.push_back(r);
  if (cacheable) pathOfPair_[key] = *pathId;
  return Status();
}

Status Engine::startFlow(int src, uint32_t sendStep, int dst, uint32_t recvStep, uint64_t bytes) {
  uint32_t pid = 0;
  LOOM_CHECK(pathFor(rankGpu_[src], rankGpu_[dst], &pid));
  const PathRec& p = paths_[pid];
  ++res_->flows;
  if (bytes == 0 || p.len == 0) {  // nothing to share: only the latency
    push(now_ + p.latency, kEvStepDone, src, sendStep);
    const SimStep& r = set_.shapeOfRank(dst).steps[recvStep];
    double extra = r.op == OpKind::kRecvReduce ? opSeconds(r.bytes, opt_.reduceGBps) : 0.0;
    push(now_ + p.latency + extra, kEvStepDone, dst, recvStep);
    return Status();
  }
  uint32_t f = mm_.addFlow(p.off, p.len, static_cast<double>(bytes), now_);
  if (f >= flowInfo_.size()) flowInfo_.resize(f + 1);
  flowInfo_[f] = FlowInfo{src, dst, sendStep, recvStep, bytes, pid};
  return Status();
}

Status Engine::ready(int rank, uint32_t step) {
  const Shape& sh = set_.shapeOfRank(rank);
  const SimStep& st = sh.steps[step];
  int n = set_.nranks();
  switch (st.op) {
    case OpKind::kCopy:
      push(now_ + opSeconds(st.bytes, opt_.copyGBps), kEvStepDone, rank, step);
      return Status();
    case OpKind::kReduce:
      push(now_ + opSeconds(st.bytes, opt_.reduceGBps), kEvStepDone, rank, step);
      return Status();
    default:
      break;
  }
  bool isSend = st.op == OpKind::kSend;
  int peer = (rank + st.peerDelta) % n;
  int src = isSend ? rank : peer, dst = isSend ? peer : rank;
  uint64_t key = matchKey(src, dst, st.seq);
  if (st.seq >= (1u << 22))
    return invalidArgument("sim: rank ", rank, " step ", step,
                           ": more than 4M messages to one peer");
  auto it = waiting_.find(key);
  if (it != waiting_.end()) {
    uint32_t otherStep = static_cast<uint32_t>(it->second);
    const SimStep& o = set_.shapeOfRank(peer).steps[otherStep];
    if (o.bytes != st.bytes)
      return invalidArgument("sim: rank ", src, " sends ", isSend ? st.bytes : o.bytes,
                             " bytes to rank ", dst, " (message ", st.seq, ") but it receives ",
                             isSend ? o.bytes : st.bytes);
    waiting_.erase(it);
    return isSend ? startFlow(rank, step, peer, otherStep, st.bytes)
                  : startFlow(peer, otherStep, rank, step, st.bytes);
  }
  uint64_t v = (isSend ? 0ull : 1ull << 63) | (static_cast<uint64_t>(rank) << 32) | step;
  waiting_.emplace(key, v);
  return Status();
}

void Engine::flowEnd(uint32_t f) {
  const FlowInfo& fi = flowInfo_[f];
  const PathRec& p = paths_[fi.path];
  for (uint32_t i = 0; i < p.len; ++i) {
    const PathHop& h = hops_[p.off + i];
    res_->linkBytes[h.link] += static_cast<double>(fi.bytes) * h.weight;
  }
  mm_.removeFlow(f, now_);
  push(now_ + p.latency, kEvStepDone, fi.src, fi.sendStep);
  const SimStep& r = set_.shapeOfRank(fi.dst).steps[fi.recvStep];
  double extra = r.op == OpKind::kRecvReduce ? opSeconds(r.bytes, opt_.reduceGBps) : 0.0;
  push(now_ + p.latency + extra, kEvStepDone, fi.dst, fi.recvStep);
}

Status Engine::stepDone(int rank, uint32_t step) {
  const Shape& sh = set_.shapeOfRank(rank);
  const SimStep& st = sh.steps[step];
  ++stepsDone_;
  if (now_ > res_->rankSeconds[rank]) res_->rankSeconds[rank] = now_;
  for (uint32_t k = 0; k < st.nextCount; ++k) {
    uint32_t nx = sh.next[st.nextBegin + k];
    if (--pending_[rank][nx] == 0) LOOM_CHECK(ready(rank, nx));
  }
  return Status();
}

Status Engine::deadlock() const {
  int n = set_.nranks();
  for (int r = 0; r < n; ++r) {
    const Shape& sh = set_.shapeOfRank(r);
    for (size_t i = 0; i < sh.steps.size(); ++i) {
      if (pending_[r][i] == 0) continue;
      // The first step still waiting: name the dependency that never finished.
      const SimStep& st = sh.steps[i];
      return invalidUsage("sim: deadlock: ", stepsDone_, " of ", set_.totalSteps(),
                          " steps done; rank ", r, " step ", i, " (", sched::opKindName(st.op),
                          ", peer ", (r + st.peerDelta) % n, ") still waits for ", pending_[r][i],
                          " dependencies");
    }
  }
  for (const auto& kv : waiting_) {
    int rank = static_cast<int>((kv.second >> 32) & 0x7fffffff);
    uint32_t step = static_cast<uint32_t>(kv.second);
    const SimStep& st = set_.shapeOfRank(rank).steps[step];
    return invalidUsage("sim: deadlock: rank ", rank, " step ", step, " (",
                        sched::opKindName(st.op), " ", st.bytes, " bytes, peer ",
                        (rank + st.peerDelta) % n, ", message ", st.seq, ") has no partner");
  }
  return invalidUsage("sim: deadlock: flows stalled at zero rate (a link of capacity 0?)");
}

Status Engine::run() {
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
  waiting_.reserve(4 * static_cast<size_t>(n));
  res_->linkBytes.assign(net_.numLinks(), 0.0);
  res_->rankSeconds.assign(n, 0.0);
  pending_.resize(n);
  for (int r = 0; r < n; ++r) {
    const Shape& sh = set_.shapeOfRank(r);
    pending_[r].resize(sh.steps.size());
    for (size_t i = 0; i < sh.steps.size(); ++i) {
      if (sh.steps[i].depCount > 65535) return invalidArgument("sim: step with > 65535 deps");
      pending_[r][i] = static_cast<uint16_t>(sh.steps[i].depCount);
    }
  }
  for (int r = 0; r < n; ++r) {
    const Shape& sh = set_.shapeOfRank(r);
    for (size_t i = 0; i < sh.steps.size(); ++i)
      if (sh.steps[i].depCount == 0) LOOM_CHECK(ready(r, static_cast<uint32_t>(i)));
  }
  auto emit = [this](uint32_t f, double t, uint32_t ver) {
    if (t < MaxMin::kInf) push(t, kEvFlowEnd, f, 0, ver);
  };
  for (;;) {
    int c = mm_.recompute(now_, opt_.exact || !opt_.components, emit);
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
      if (ev.kind == kEvFlowEnd && (!mm_.active(ev.a) || mm_.version(ev.a) != ev.ver)) continue;
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
  if (stepsDone_ != set_.totalSteps()) return deadlock();
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
