// CPU work in the simulator: reductions and CPU-performed transfers as flows on core links.
#include <cmath>
#include <map>
#include <vector>

#include "sim/engine_impl.h"

namespace loom::sim::detail {

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
uint32_t Engine::cpuPathFor(uint32_t netPath, int src, int dst, int32_t sendDelta,
                            const SimStep& recv) {
  const bool reduce = fused_ && recv.op == OpKind::kRecvReduce;
  const auto key = std::make_tuple(netPath, src, dst, reduce ? reduceKind(recv) : -1);
  const bool cacheable = opt_.routing != RoutingMode::kUgal;
  if (cacheable) {
    auto it = cpuPathOf_.find(key);
    if (it != cpuPathOf_.end()) return it->second;
  }
  const PathRec base = paths_[netPath];
  tmpHops_.assign(hops_.begin() + base.off, hops_.begin() + base.off + base.len);
  if (opt_.sendCoreGBps > 0) addCoreHops(src, opt_.sendCoreGBps, &tmpHops_);
  const double recvGBps = reduce ? recvReduceRate(recv) : opt_.recvCoreGBps;
  if (recvGBps > 0) addCoreHops(dst, recvGBps, &tmpHops_);
  // The pair's own link (folded: every member pair of the class path has one; weight 1 each),
  // held longer by a reduction that costs more than the copy (SimOptions::pairCopyGBps).
  if (opt_.pairGBps > 0) {
    double w = 1.0;
    if (reduce && opt_.pairCopyGBps > 0)
      w += opt_.pairGBps * std::max(0.0, 1.0 / recvGBps - 1.0 / opt_.pairCopyGBps);
    tmpHops_.push_back({pairLink_.at(Folding::key(src, sendDelta)), w});
  }
  uint32_t id = addPath(&tmpHops_, base.latency, reduce);
  if (cacheable) cpuPathOf_[key] = id;
  return id;
}

// A Reduce or Copy of `bytes` at `gbps` per core, or a RecvReduce's reduction after its transfer.
void Engine::startCompute(int unit, uint32_t step, uint64_t bytes, double gbps, int kind) {
  if (!compute_ || bytes == 0 || gbps <= 0) {
    after(opSeconds(bytes, gbps), 0, kEvStepDone, unit, step);
    return;
  }
  const size_t slot = kComputeKinds * static_cast<size_t>(unit) + kind;
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
      opt_.recvReduceCoreGBps < 0 || opt_.recvReduceInPlaceCoreGBps < 0 || opt_.pairGBps < 0 ||
      opt_.reduceInPlaceGBps < 0 || opt_.pairCopyGBps < 0)
    return invalidArgument(
        "sim: hostCores (", opt_.hostCores, "), sendCoreGBps (", opt_.sendCoreGBps,
        "), recvCoreGBps (", opt_.recvCoreGBps, "), recvReduceCoreGBps (", opt_.recvReduceCoreGBps,
        "), recvReduceInPlaceCoreGBps (", opt_.recvReduceInPlaceCoreGBps, "), pairGBps (",
        opt_.pairGBps, "), reduceInPlaceGBps (", opt_.reduceInPlaceGBps, ") and pairCopyGBps (",
        opt_.pairCopyGBps, ") must be >= 0");
  if (!compute_) return setUpBusy();
  cpuMoves_ = opt_.sendCoreGBps > 0 || opt_.recvCoreGBps > 0 || opt_.recvReduceCoreGBps > 0 ||
              opt_.pairGBps > 0;
  fused_ = opt_.recvReduceCoreGBps > 0;
  computePath_.assign(kComputeKinds * static_cast<size_t>(units_), -1);
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
  if (opt_.hostCores <= 0) return setUpBusy();
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
  return setUpBusy();
}

Status Engine::setUpBusy() {
  const auto& pts = opt_.busySlowdown;
  busyOn_ = !pts.empty();
  if (opt_.busyByDemand && !busyOn_)
    return invalidArgument("sim: busyByDemand needs busySlowdown points");
  if (!busyOn_) return Status();
  if (!compute_ || opt_.hostCores <= 0 || folded_)
    return invalidArgument("sim: busySlowdown needs computeShared, hostCores > 0 and no folding");
  for (size_t i = 0; i < pts.size(); ++i) {
    const auto [k, f] = pts[i];
    if (k <= opt_.hostCores || (i > 0 && k <= pts[i - 1].first) || !(f > 0) || !std::isfinite(f))
      return invalidArgument("sim: busySlowdown point ", k, ":", f, " must have k > hostCores (",
                             opt_.hostCores, "), k above the point before it and 0 < f < inf");
  }
  hostBusy_.assign(net_.numHosts(), 0);
  busyCount_.assign(net_.numHosts(), 0);
  return Status();
}

double Engine::busyFactor(double k) const {
  double k0 = opt_.hostCores, f0 = 1.0;
  if (k <= k0) return 1.0;
  for (const auto& [k1, f1] : opt_.busySlowdown) {
    if (k <= k1) return f0 + (f1 - f0) * (k - k0) / (k1 - k0);
    k0 = k1;
    f0 = f1;
  }
  return f0;
}

bool Engine::updateBusy() {
  if (!busyOn_) return false;
  std::fill(busyCount_.begin(), busyCount_.end(), 0);
  for (int u = 0; u < units_; ++u) {
    if (!mm_->carries(cpuBase_ + u)) continue;
    // By demand: the share of its core the rank's flows would take at their caps (rounded, so
    // that adding and removing the same flows gives the same count).
    busyCount_[unitHosts_[u].front().first] +=  // unfolded: a unit is one rank on one host
        opt_.busyByDemand
            ? std::round(std::min(1.0, mm_->demand(cpuBase_ + u) / kCoreNsPerSec) * 1e6) / 1e6
            : 1.0;
  }
  bool changed = false;
  for (size_t h = 0; h < busyCount_.size(); ++h) {
    const double k = busyCount_[h];
    if (k == hostBusy_[h]) continue;
    const double before = busyFactor(hostBusy_[h]), after = busyFactor(k);
    hostBusy_[h] = k;
    if (after == before) continue;
    mm_->setCapacity(hostBase_ + static_cast<uint32_t>(h), opt_.hostCores * kCoreNsPerSec / after);
    changed = true;
  }
  return changed;
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

}  // namespace loom::sim::detail
