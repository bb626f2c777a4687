#include "sim/engine.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "sim/engine_impl.h"

namespace loom::sim {

double SimResult::utilisation(const Net& net, int link) const {
  if (seconds <= 0) return 0;
  return linkBytes[link] / (net.link(link).bytesPerSec * seconds);
}

namespace detail {

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
    uint32_t id = pathOfPair_.find(key);
    if (id != FlatMap::kNone) {
      *pathId = id;
      return Status();
    }
  }
  Path p;
  LOOM_CHECK(router_.route(src, dst, mm_->linkLoad(), &p));
  if (router_.bundleViolated())
    return internalError("sim: GPU ", src, " -> GPU ", dst, " crosses a link bundle unevenly");
  PathRec r;
  r.off = static_cast<uint32_t>(hops_.size());
  r.len = static_cast<uint32_t>(p.hops.size());
  hops_.insert(hops_.end(), p.hops.begin(), p.hops.end());
  r.latency = pathLatency(p, src == dst, opt_);
  *pathId = static_cast<uint32_t>(paths_.size());
  paths_.push_back(r);
  if (cacheable) pathOfPair_.set(key, *pathId);
  return Status();
}

Status Engine::startFlow(int src, uint32_t sendStep, int dst, uint32_t recvStep, uint64_t bytes,
                         int32_t sendDelta, uint32_t conn) {
  Conn& c = conns_[conn];
  uint32_t pid = c.path;
  if (pid == kNoConn) {
    LOOM_CHECK(pathFor(src, sendDelta, &pid));
    if (opt_.routing != RoutingMode::kUgal) c.path = pid;  // UGAL routes every message
  }
  res_->flows += mult(src);
  if (bytes == 0 || paths_[pid].len == 0) {  // nothing to share: only the latency
    ++res_->solverFlows;
    finish(src, sendStep, dst, recvStep, paths_[pid].latency, false);
    return Status();
  }
  if (cpuMoves_) pid = cpuPathFor(pid, src, dst, sendDelta, stepOf(dst, recvStep));
  const PathRec& p = paths_[pid];
  const FlowInfo fi{src, dst, sendStep, recvStep, bytes, pid, conn};
  if (c.idle) {  // its last message went out in this batch: this one takes the flow over
    c.idle = false;
    takeOver(c.flow, fi);
    return Status();
  }
  if (c.parked) {  // its flow restarts (on the same path; else it makes way for a new one)
    c.parked = false;
    if (flowInfo_[c.flow].path == pid) {
      ++res_->solverFlows;
      mm_->unpark(c.flow, static_cast<double>(bytes), now_);
      flowInfo_[c.flow] = fi;
      return Status();
    }
    mm_->removeFlow(c.flow, now_);
    c.flow = kNoConn;
  }
  if (c.flow != kNoConn) {
    enqueue(conn, fi, stepOf(src, sendStep).seq);
    return Status();
  }
  ++res_->solverFlows;
  uint32_t f = mm_->addFlow(p.off, p.len, static_cast<double>(bytes), now_);
  if (f >= flowInfo_.size()) flowInfo_.resize(f + 1);
  flowInfo_[f] = fi;
  conns_[conn].flow = f;
  return Status();
}

Status Engine::ready(int unit, uint32_t step) {
  const SimStep& st = stepOf(unit, step);
  if (opt_.traceSteps && traceStart_[unit][step] < 0) traceStart_[unit][step] = now_;
  switch (st.op) {
    case OpKind::kCopy:
      startCompute(unit, step, st.bytes, opt_.copyGBps, kComputeCopy);
      return Status();
    case OpKind::kReduce:
      startCompute(unit, step, st.bytes, reduceRate(st), reduceKind(st));
      return Status();
    default:
      break;
  }
  const bool isSend = st.op == OpKind::kSend;
  const uint32_t conn = isSend ? connBase_[unit] + st.slot : inConn_[inBase_[unit] + st.slot];
  if (conn == kNoConn) {
    markWaiting(unit, step, false);  // no partner: reported as a deadlock
    return Status();
  }
  Conn& c = conns_[conn];
  const int peer = isSend ? c.dst : c.src;
  // The partner: the peer's seq-th message in the other direction with this rank.
  const uint32_t list = isSend ? c.recvList : c.sendList;
  if (list == kNoConn || st.seq >= (isSend ? c.recvLen : c.messages)) {
    markWaiting(unit, step, false);
    return Status();
  }
  const uint32_t otherStep = lists_[list + st.seq];
  // It waits if it became ready before. The connection counts the messages of each side that
  // became ready in order: below the partner side's count, it waits; at or above, it does not
  // unless that side ever went out of order. Only then is the peer's pending count (far away in
  // memory) read.
  const int mySide = isSend ? 0 : 1;
  const bool inOrder = st.seq == c.ready[mySide];
  if (inOrder) {
    ++c.ready[mySide];
  } else {
    c.outOfOrder[mySide] = true;
  }
  const bool waits =
      st.seq < c.ready[1 - mySide] || (c.outOfOrder[1 - mySide] && isWaiting(peer, otherStep));
  if (!waits) {
    markWaiting(unit, step, inOrder);  // the partner is not ready yet
    return Status();
  }
  const SimStep& o = stepOf(peer, otherStep);
  if (o.bytes != st.bytes) {
    const int rank = unitRank(unit);
    const int peerRank = static_cast<int>((int64_t{rank} + st.peerDelta) % set_.nranks());
    return invalidArgument("sim: rank ", isSend ? rank : peerRank, " sends ",
                           isSend ? st.bytes : o.bytes, " bytes to rank ", isSend ? peerRank : rank,
                           " (message ", st.seq, ") but it receives ", isSend ? o.bytes : st.bytes);
  }
  if (track_ || c.outOfOrder[1 - mySide]) clearWaiting(peer, otherStep);
  return isSend ? startFlow(unit, step, peer, otherStep, st.bytes, c.delta, conn)
                : startFlow(peer, otherStep, unit, step, st.bytes, c.delta, conn);
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
    listOf_.set(kv.first, off);
    for (uint32_t step : kv.second) lists_.push_back(step);
    listLen_.resize(lists_.size(), 0);
    listLen_[off] = static_cast<uint32_t>(kv.second.size());
  }
}

void Engine::finish(int32_t src, uint32_t sendStep, int32_t dst, uint32_t recvStep, double latency,
                    bool reduced) {
  const SimStep& r = stepOf(dst, recvStep);
  if (r.op != OpKind::kRecvReduce || reduced) {  // both steps done together: one event
    after(latency, 0, kEvXferDone, src, sendStep, dst, recvStep);
    return;
  }
  after(latency, 0, kEvStepDone, src, sendStep);
  if (compute_) {
    after(latency, 0, kEvReduce, dst, recvStep);
  } else {
    after(latency, opSeconds(r.bytes, reduceRate(r)), kEvStepDone, dst, recvStep);
  }
}

void Engine::flowEnd(uint32_t f) {
  const FlowInfo fi = flowInfo_[f];
  const PathRec& p = paths_[fi.path];
  paths_[fi.path].bytes += static_cast<double>(fi.bytes);
  if (fi.dst < 0) {  // compute: the step is done
    mm_->removeFlow(f, now_);
    after(0, 0, kEvStepDone, fi.src, fi.sendStep);
    return;
  }
  finish(fi.src, fi.sendStep, fi.dst, fi.recvStep, p.latency, p.reduces);
  nextOnConnection(f);
}

void Engine::after(double d1, double d2, uint32_t kind, uint32_t a, uint32_t b, uint32_t ver,
                   uint32_t c) {
  const Event e{now_ + d1 + d2, kind, a, b, ver, c};
  for (size_t i = 0; i < fifos_.size(); ++i) {
    Fifo& q = fifos_[i];
    if (q.d1 != d1 || q.d2 != d2) continue;
    if (q.head == q.ev.size()) {  // drained: reuse the buffer from its start
      q.ev.clear();
      q.head = 0;
      fifoHeads_.push({e.t, static_cast<uint32_t>(i)});
    } else if (q.head > 4096 && 2 * q.head > q.ev.size()) {
      q.ev.erase(q.ev.begin(), q.ev.begin() + static_cast<std::ptrdiff_t>(q.head));
      q.head = 0;
    }
    q.ev.push_back(e);
    return;
  }
  if (fifos_.size() < kMaxFifos) {
    fifoHeads_.push({e.t, static_cast<uint32_t>(fifos_.size())});
    fifos_.push_back(Fifo{d1, d2, {e}, 0});
    return;
  }
  events_.push(e);
}

bool Engine::nextEvent(double* t, int* from) const {
  // Ties: the heap of other events first, then flow ends, then the FIFOs in index order.
  bool any = !events_.empty();
  if (any) {
    *t = events_.top().t;
    *from = -1;
  }
  if (!ends_.empty() && (!any || ends_.top().t < *t)) {
    *t = ends_.top().t;
    *from = -2;
    any = true;
  }
  if (!fifoHeads_.empty() && (!any || fifoHeads_.top().t < *t)) {
    *t = fifoHeads_.top().t;
    *from = static_cast<int>(fifoHeads_.top().fifo);
    any = true;
  }
  return any;
}

Event Engine::takeEvent(int from) {
  if (from == -2) {
    const FlowEndEvent e = ends_.top();
    ends_.pop();
    if (!ends_.empty()) __builtin_prefetch(&flowInfo_[ends_.top().flow]);  // likely next
    return Event{e.t, kEvFlowEnd, e.flow, 0, e.ver, 0};
  }
  if (from < 0) {
    Event e = events_.top();
    events_.pop();
    return e;
  }
  Fifo& q = fifos_[from];
  if (track_ && q.head + kPrefetch < q.ev.size()) {  // the counts a later event will touch
    const Event& e = q.ev[q.head + kPrefetch];
    if (e.kind == kEvStepDone || e.kind == kEvXferDone)
      __builtin_prefetch(&pending_[pendingOff_[e.a] + e.b]);
    if (e.kind == kEvXferDone) __builtin_prefetch(&pending_[pendingOff_[e.ver] + e.c]);
  }
  const Event e = q.ev[q.head++];
  if (q.head == q.ev.size()) {  // `from` heads fifoHeads_ (nextEvent chose it)
    fifoHeads_.pop();
  } else {
    fifoHeads_.replaceTop({q.ev[q.head].t, static_cast<uint32_t>(from)});
  }
  return e;
}

Status Engine::stepDone(int unit, uint32_t step) {
  const SimStep& st = stepOf(unit, step);
  ++stepsDone_;
  if (now_ > unitDone_[unit]) unitDone_[unit] = now_;
  if (opt_.traceSteps) traceEnd_[unit][step] = now_;
  const uint32_t* next = &next_[nextBase_[unit] + st.nextBegin];
  for (uint32_t k = 0; k < st.nextCount; ++k)
    if (depDone(unit, next[k])) LOOM_CHECK(ready(unit, next[k]));
  return Status();
}

Status Engine::deadlock() const {
  if (!track_) return internalError("sim: deadlock (run again with per-step counts)");
  int n = set_.nranks();
  for (int u = 0; u < units_; ++u) {
    const Shape& sh = unitShape(u);
    for (size_t i = 0; i < sh.steps.size(); ++i) {
      if (pending(u, i) == 0 || pending(u, i) == kWaiting) continue;
      // The first step still waiting: name the dependency that never finished.
      const SimStep& st = sh.steps[i];
      int r = unitRank(u);
      return invalidUsage("sim: deadlock: ", stepsDone_, " of ", unitSteps_, " steps done; rank ",
                          r, " step ", i, " (", sched::opKindName(st.op), ", peer ",
                          (r + st.peerDelta) % n, ") still waits for ", pending(u, i),
                          " dependencies");
    }
  }
  for (int u = 0; u < units_; ++u) {
    const Shape& sh = unitShape(u);
    for (size_t i = 0; i < sh.steps.size(); ++i) {
      if (pending(u, i) != kWaiting) continue;
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
  if (!opt_.busySlowdown.empty()) {
    res_->foldNote = "not folded: busySlowdown";
  } else if (opt_.fold && !opt_.exact) {
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
    router_.setBundles(
        opt_.bundle && !opt_.exact &&
        (opt_.routing == RoutingMode::kSpray || opt_.routing == RoutingMode::kValiant));
  }
  router_.setCachePaths(false);  // pathOfPair_ keeps them
  LOOM_CHECK(setUpCompute());
  mm_ = std::make_unique<MaxMin>(&cap_, &hops_);
  linkAcc_.assign(cap_.size(), 0.0);
  unitDone_.assign(units_, 0.0);
  LOOM_CHECK(copySteps());
  buildMessageLists();
  buildConnections();
  // Queued runs rebuild a message from its connection's path and lists: not when a message's
  // path depends on live load (UGAL) or on the receive (CPU-moved transfers).
  runs_ = !cpuMoves_ && opt_.routing != RoutingMode::kUgal;
  return setUpDependencies();
}

Status Engine::copySteps() {
  // All shapes' steps and dependents in two arrays (huge pages), found per unit by its shape.
  std::vector<uint32_t> stepOff(set_.numShapes()), nextOff(set_.numShapes());
  for (int s = 0; s < set_.numShapes(); ++s) {
    const Shape& sh = set_.shape(s);
    stepOff[s] = static_cast<uint32_t>(steps_.size());
    nextOff[s] = static_cast<uint32_t>(next_.size());
    if (steps_.size() + sh.steps.size() >= kNoConn || next_.size() + sh.next.size() >= kNoConn)
      return invalidArgument("sim: more than 4G steps in the distinct schedules");
    steps_.insert(steps_.end(), sh.steps.begin(), sh.steps.end());
    next_.insert(next_.end(), sh.next.begin(), sh.next.end());
  }
  stepBase_.resize(units_);
  nextBase_.resize(units_);
  for (int u = 0; u < units_; ++u) {
    stepBase_[u] = stepOff[unitShapeId(u)];
    nextBase_[u] = nextOff[unitShapeId(u)];
  }
  return Status();
}

Status Engine::setUpDependencies() {
  track_ = opt_.trackSteps || opt_.exact;
  for (int s = 0; s < set_.numShapes(); ++s)
    for (const SimStep& st : set_.shape(s).steps)
      if (st.depCount >= kWaiting)
        return invalidArgument("sim: step with more than ", kWaiting - 1, " dependencies");
  pendingOff_.resize(units_ + 1);
  for (int u = 0; u < units_; ++u) pendingOff_[u + 1] = pendingOff_[u] + unitShape(u).steps.size();
  unitSteps_ = pendingOff_[units_];
  if (track_) {
    pending_.resize(unitSteps_);
    for (int u = 0; u < units_; ++u) {
      const Shape& sh = unitShape(u);
      for (size_t i = 0; i < sh.steps.size(); ++i)
        pending(u, static_cast<uint32_t>(i)) = static_cast<uint16_t>(sh.steps[i].depCount);
    }
    return Status();
  }
  // Counts only for steps with several dependencies, numbered per shape.
  multiIdx_.resize(set_.numShapes());
  std::vector<uint32_t> multis(set_.numShapes(), 0);
  for (int s = 0; s < set_.numShapes(); ++s) {
    const Shape& sh = set_.shape(s);
    multiIdx_[s].assign(sh.steps.size(), kNoConn);
    for (size_t i = 0; i < sh.steps.size(); ++i)
      if (sh.steps[i].depCount >= 2) multiIdx_[s][i] = multis[s]++;
  }
  multiOff_.assign(units_ + 1, 0);
  for (int u = 0; u < units_; ++u) multiOff_[u + 1] = multiOff_[u] + multis[unitShapeId(u)];
  multi_.resize(multiOff_[units_]);
  oooBits_.assign((unitSteps_ + 63) / 64, 0);
  for (int u = 0; u < units_; ++u) {
    const Shape& sh = unitShape(u);
    const std::vector<uint32_t>& idx = multiIdx_[unitShapeId(u)];
    for (size_t i = 0; i < sh.steps.size(); ++i)
      if (idx[i] != kNoConn)
        multi_[multiOff_[u] + idx[i]] = static_cast<uint16_t>(sh.steps[i].depCount);
  }
  return Status();
}

Status Engine::run() {
  LOOM_CHECK(setUp());
  if (opt_.traceSteps) {
    traceStart_.assign(units_, {});
    traceEnd_.assign(units_, {});
    for (int u = 0; u < units_; ++u) {
      traceStart_[u].assign(unitShape(u).steps.size(), -1.0);
      traceEnd_[u].assign(unitShape(u).steps.size(), -1.0);
    }
  }
  for (int u = 0; u < units_; ++u) {
    const Shape& sh = unitShape(u);
    for (size_t i = 0; i < sh.steps.size(); ++i)
      if (sh.steps[i].depCount == 0) LOOM_CHECK(ready(u, static_cast<uint32_t>(i)));
  }
  auto emit = [this](uint32_t f, double t, uint32_t ver) {
    if (t < MaxMin::kInf) ends_.push({t, f, ver});
  };
  for (;;) {
    releaseIdle();
    // A host whose busy ranks changed its cores' capacity: every flow is solved again.
    const bool global = updateBusy() || opt_.exact || !opt_.components;
    int c = mm_->recompute(now_, global, emit);
    if (c > 0) {
      ++res_->recomputes;
      res_->recomputeFlows += c;
      res_->maxComponentFlows = std::max(res_->maxComponentFlows, c);
    }
    double batchStart = 0, t = 0;
    int from = 0;
    if (!nextEvent(&batchStart, &from)) break;
    // A batch is processed at the time of its first event: later events in it complete up to
    // timeEpsilon early (flows started in the batch all get rates from that instant).
    double batchEnd = batchStart + (opt_.exact ? 0.0 : opt_.timeEpsilon);
    ++res_->batches;
    bool any = false;
    while (nextEvent(&t, &from) && t <= batchEnd) {
      if (opt_.exact && any) break;
      const Event ev = takeEvent(from);
      if (ev.kind == kEvFlowEnd && mm_->version(ev.a) != ev.ver) continue;  // stale
      now_ = std::max(now_, batchStart);
      any = true;
      ++res_->events;
      if (ev.kind == kEvFlowEnd) {
        flowEnd(ev.a);
      } else if (ev.kind == kEvXferDone) {
        LOOM_CHECK(stepDone(static_cast<int>(ev.a), ev.b));
        LOOM_CHECK(stepDone(static_cast<int>(ev.ver), ev.c));
      } else if (ev.kind == kEvReduce) {
        const SimStep& st = stepOf(static_cast<int>(ev.a), ev.b);
        startCompute(static_cast<int>(ev.a), ev.b, st.bytes, reduceRate(st), reduceKind(st));
      } else {
        LOOM_CHECK(stepDone(static_cast<int>(ev.a), ev.b));
      }
    }
  }
  res_->seconds = now_;
  int n = set_.nranks();
  res_->rankSeconds.resize(n);
  for (int r = 0; r < n; ++r) res_->rankSeconds[r] = unitDone_[unitOf(r)];
  if (opt_.traceSteps) {
    res_->stepStartSeconds.resize(n);
    res_->stepEndSeconds.resize(n);
    for (int r = 0; r < n; ++r) {
      res_->stepStartSeconds[r] = traceStart_[unitOf(r)];
      res_->stepEndSeconds[r] = traceEnd_[unitOf(r)];
    }
  }
  for (const PathRec& p : paths_)
    for (uint32_t i = 0; i < p.len; ++i)
      linkAcc_[hops_[p.off + i].link] += p.bytes * hops_[p.off + i].weight;
  res_->linkBytes.assign(net_.numLinks(), 0.0);
  for (int l = 0; l < net_.numLinks(); ++l) {
    int s = folded_ ? fold_.linkClass[l] : l;
    if (s >= 0) res_->linkBytes[l] = linkAcc_[s];
  }
  if (!folded_ && router_.numBundles() > 0) {
    router_.expandBundles(&res_->linkBytes);
    res_->foldNote += strCat("; ", router_.numBundles(), " bundles of parallel links");
  }
  if (stepsDone_ != unitSteps_) {
    deadlocked_ = true;
    return deadlock();
  }
  return Status();
}

}  // namespace detail

Status simulate(const Net& net, const ScheduleSet& set, const std::vector<int>& rankGpu,
                const SimOptions& opt, SimResult* out) {
  auto t0 = std::chrono::steady_clock::now();
  SimOptions o = opt;
  Status s;
  bool retracked = false;
  for (;;) {
    *out = SimResult();
    detail::Engine e(net, set, rankGpu, o, out);
    s = e.run();
    if (e.needsTracking()) {  // deadlocked: again with per-step counts, to name the step
      o.trackSteps = true;
      retracked = true;
      continue;
    }
    if (!e.bundleViolated()) break;
    o.bundle = false;  // a path crossed a bundle unevenly: the same run without bundles
  }
  if (retracked && s.ok())  // the shortcut changed the answer: a bug, never a result
    s = internalError("sim: deadlocked without per-step counts but not with them");
  if (opt.bundle && !o.bundle)
    out->foldNote += "; links not bundled (a path crosses parallel links unevenly)";
  out->wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

}  // namespace loom::sim
