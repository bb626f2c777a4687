#include "plan/cost_model.h"

#include <algorithm>
#include <map>

namespace loom::plan {

void CostModel::addResource(const std::string& name, double gbps, int* id) {
  *id = static_cast<int>(cap_.size());
  cap_.push_back(gbps * 1e9);
  resName_.push_back(name);
}

CostModel::CostModel(const Placement& place, const CostParams& params)
    : place_(place), params_(params) {
  const int p = place_.nranks;
  if (place_.hostOf.size() != static_cast<size_t>(p)) {
    place_.hostOf.resize(p);
    for (int r = 0; r < p; ++r) place_.hostOf[r] = r;
  }
  if (place_.localOf.size() != static_cast<size_t>(p)) {
    place_.localOf.assign(p, 0);
    std::map<int, int> seen;
    for (int r = 0; r < p; ++r) place_.localOf[r] = seen[place_.hostOf[r]]++;
  }
  onHost_.assign(p, 0);
  for (int r = 0; r < p; ++r)
    for (int q = 0; q < p; ++q) onHost_[r] += place_.hostOf[q] == place_.hostOf[r];
  nic_.assign(p, -1);
  leaf_.assign(p, -1);
  group_.assign(p, -1);
  const topo::Topology* t = place_.topology;
  std::map<int, int> hostRes, nicRes, leafIdx;
  const double flatGBps = place_.interHost == Transport::kTcp ? params_.tcpGBps : params_.netGBps;
  nicGBps_ = flatGBps;
  for (int r = 0; r < p; ++r) {
    const int h = place_.hostOf[r];
    if (!hostRes.count(h)) {
      int id;
      addResource(strCat("host", h, ".mem"), params_.hostMemGBps, &id);
      hostRes[h] = id;
    }
    int ca = -1, leaf = -1;
    double gbps = flatGBps;
    if (t && h >= 0 && h < static_cast<int>(t->hosts.size()) && !t->hosts[h].fabricNodes.empty()) {
      const auto& cas = t->hosts[h].fabricNodes;
      ca = cas[place_.localOf[r] % cas.size()];
      for (int l : t->fabric.nodes[ca].links) {
        const topo::Link& lk = t->fabric.links[l];
        if (lk.up && t->fabric.isSwitch(lk.peer(ca))) {
          leaf = lk.peer(ca);
          gbps = lk.gbps > 0 ? lk.gbps : gbps;
          break;
        }
      }
    }
    int key = ca >= 0 ? ca : -1 - h;  // one NIC per host without a fabric
    if (!nicRes.count(key)) {
      int out, in;
      std::string nm = ca >= 0 ? t->fabric.nodes[ca].desc : strCat("host", h, ".nic");
      addResource(nm + " tx", gbps, &out);
      addResource(nm + " rx", gbps, &in);
      nicRes[key] = out;
    }
    nic_[r] = nicRes[key];
    nicGBps_ = gbps;
    if (leaf >= 0) {
      if (!leafIdx.count(leaf)) {
        double up = 0;
        for (int l : t->fabric.nodes[leaf].links) {
          const topo::Link& lk = t->fabric.links[l];
          int o = lk.peer(leaf);
          if (lk.up && t->fabric.isSwitch(o) && t->fabric.nodes[o].role != topo::Role::kLeaf)
            up += lk.gbps;
        }
        int out, in;
        addResource(t->fabric.nodes[leaf].desc + " uplinks out", up > 0 ? up : 1e-3, &out);
        addResource(t->fabric.nodes[leaf].desc + " uplinks in", up > 0 ? up : 1e-3, &in);
        leafIdx[leaf] = static_cast<int>(leafUp_.size());
        leafUp_.push_back(out);
      }
      leaf_[r] = leafIdx[leaf];
      group_[r] = t->fabric.nodes[leaf].group;
    }
  }
  hostMem_.assign(1, -1);
  for (auto& [h, id] : hostRes) {
    if (h >= static_cast<int>(hostMem_.size())) hostMem_.resize(h + 1, -1);
    if (h >= 0) hostMem_[h] = id;
  }
  if (t && t->cls.type == topo::FabricType::kDragonflyPlus) {
    numGroups_ = static_cast<int>(t->cls.groups.size());
    for (const topo::GroupPair& gp : t->cls.groupPairs) {
      int ab, ba;
      addResource(strCat("global g", gp.a, "->g", gp.b), gp.gbps, &ab);
      addResource(strCat("global g", gp.b, "->g", gp.a), gp.gbps, &ba);
      globalRes_[int64_t(gp.a) * numGroups_ + gp.b] = ab;
      globalRes_[int64_t(gp.b) * numGroups_ + gp.a] = ba;
    }
  }
}

PathKind CostModel::pathKind(int a, int b) const {
  if (place_.hostOf[a] == place_.hostOf[b]) return PathKind::kLocal;
  if (leaf_[a] < 0 || leaf_[b] < 0) return PathKind::kFlat;
  if (leaf_[a] == leaf_[b]) return PathKind::kLeaf;
  if (group_[a] == group_[b] || numGroups_ == 0) return PathKind::kSpine;
  return PathKind::kGlobal;
}

double CostModel::alpha(int a, int b, uint64_t bytes) const {
  const bool tcp = place_.interHost == Transport::kTcp;
  const double base = tcp ? params_.tcpAlphaUs : params_.netAlphaUs;
  switch (pathKind(a, b)) {
    case PathKind::kLocal:
      return (params_.shmAlphaUs + (bytes > params_.shmEagerBytes ? params_.shmBigAlphaUs : 0.0)) *
             1e-6;
    case PathKind::kFlat:
      return (base + (tcp && bytes > params_.tcpEagerBytes ? params_.tcpBigAlphaUs : 0.0)) * 1e-6;
    case PathKind::kLeaf:
      return (base + params_.switchHopUs) * 1e-6;
    case PathKind::kSpine:
      return (base + 3 * params_.switchHopUs) * 1e-6;
    case PathKind::kGlobal:
      return (base + 4 * params_.switchHopUs) * 1e-6;
  }
  return base * 1e-6;
}

double CostModel::flowGBps(int a, int b, uint64_t bytes, uint64_t collBytes) const {
  const bool cached = bytes > 0;
  // What the cache threshold is compared with: the message, or the collective's footprint.
  auto key = [&](double byFootprint, int sharing) {
    return byFootprint > 0 && collBytes > 0 ? double(collBytes) * sharing : double(bytes);
  };
  if (pathKind(a, b) == PathKind::kLocal) {
    if (params_.shmCmaGBps > 0 && bytes >= params_.shmCmaBytes) return params_.shmCmaGBps;
    return cached && params_.shmCacheGBps > 0 &&
                   key(params_.shmCacheFootprint, onHost_[a]) <= params_.shmCacheBytes
               ? params_.shmCacheGBps
               : params_.shmGBps;
  }
  double link = cap_[nic_[a]] / 1e9;
  if (place_.interHost != Transport::kTcp) return link;
  const int sharing = params_.cores > 0 ? place_.nranks : 1;
  const double tcp = cached && params_.tcpCacheGBps > 0 &&
                             key(params_.tcpCacheFootprint, sharing) <= params_.tcpCacheBytes
                         ? params_.tcpCacheGBps
                         : params_.tcpGBps;
  return leaf_[a] < 0 ? tcp : std::min(link, tcp);  // without a fabric the NIC runs at tcp's rate
}

double CostModel::alphaCpu(int a, int b) const {
  if (pathKind(a, b) == PathKind::kLocal) return params_.shmAlphaCpu;
  return place_.interHost == Transport::kTcp ? params_.tcpAlphaCpu : 1.0;
}

RoundCost CostModel::roundCost(const Round& round, uint64_t collBytes) const {
  RoundCost c;
  std::vector<double> load(cap_.size(), 0.0);
  std::vector<int> touched;
  std::unordered_map<int, double> lat;
  double longest = 0;
  auto use = [&](int res, double bytes) {
    if (res < 0) return;
    if (load[res] == 0) touched.push_back(res);
    load[res] += bytes;
  };
  double cpuSec = 0;  // CPU time of all the round's messages, for `cores`
  double latCpu = 0;  // the CPU part of all the round's message latencies, for `cores`
  std::unordered_map<int, bool> active;
  for (const Flow& f : round.flows) {
    // An empty message (a segment of a count smaller than the rank count) is still sent and
    // waited for: it costs its latency and wakes its ranks, nothing else.
    const double a = alpha(f.src, f.dst, f.bytes);
    lat[f.src * sched::kMaxChannels + f.channel] += a;
    latCpu += a * alphaCpu(f.src, f.dst);
    active[f.src] = active[f.dst] = true;
    if (f.bytes == 0) continue;
    const double rate = flowGBps(f.src, f.dst, f.bytes, collBytes);
    longest = std::max(longest, f.bytes / (rate * 1e9));
    cpuSec += f.bytes / (rate * 1e9);
    const double b = static_cast<double>(f.bytes);
    PathKind k = pathKind(f.src, f.dst);
    if (k == PathKind::kLocal) {  // host memory in copy-ring bytes: a single copy costs less
      use(hostMem_[place_.hostOf[f.src]], b * params_.shmGBps / rate);
      continue;
    }
    // Without a fabric a tcp NIC is the kernel's copy: in tcpGBps bytes, so a message at the
    // cache rate loads it less (as host memory above).
    const double nb = leaf_[f.src] < 0 && place_.interHost == Transport::kTcp
                          ? b * std::min(1.0, params_.tcpGBps / rate)
                          : b;
    use(nic_[f.src], nb);
    use(nic_[f.dst] + 1, nb);
    if (k == PathKind::kSpine || k == PathKind::kGlobal) {
      use(leafUp_[leaf_[f.src]], b);
      use(leafUp_[leaf_[f.dst]] + 1, b);
    }
    if (k == PathKind::kGlobal) {
      auto it = globalRes_.find(int64_t(group_[f.src]) * numGroups_ + group_[f.dst]);
      if (it != globalRes_.end()) use(it->second, b);
    }
  }
  for (auto& [r, a] : lat) c.latency = std::max(c.latency, a);
  c.activeRanks = static_cast<int>(active.size());
  c.bandwidth = longest;
  c.bottleneck = "single flow";
  for (int res : touched) {
    double t = load[res] / cap_[res];
    if (t > c.bandwidth) c.bandwidth = t, c.bottleneck = resName_[res];
  }
  c.compute = round.reduceBytes / (params_.reduceGBps * 1e9);
  const double cores = params_.cores;
  if (cores > 0) {  // the ranks' CPU work shares `cores` cores
    c.latency = std::max(c.latency, latCpu / cores);
    if (cpuSec / cores > c.bandwidth)
      c.bandwidth = cpuSec / cores, c.bottleneck = strCat("cpu (", cores, " cores)");
    c.compute = std::max(c.compute, round.reduceSum / (params_.reduceGBps * 1e9) / cores);
    c.cpuBusy = (cpuSec + round.reduceSum / (params_.reduceGBps * 1e9)) / cores;
  }
  return c;
}

Transport CostModel::fitTransport() const {
  for (int h : place_.hostOf)
    if (h != place_.hostOf[0]) return place_.interHost;
  return Transport::kShm;
}

namespace {
// Transfer and reduction of a round: overlapped when the algorithm pipelines chunks.
double transferSec(const RoundCost& c, bool pipelined) {
  return pipelined ? std::max({c.bandwidth, c.compute, c.cpuBusy}) : c.bandwidth + c.compute;
}
// How many times over the round's active ranks oversubscribe the shared cores (1 without).
double oversubscription(const RoundCost& c, double cores) {
  return cores > 0 ? std::max(1.0, c.activeRanks / cores) : 1.0;
}
}  // namespace

CostModel::Terms CostModel::terms(const std::vector<Round>& rounds, bool pipelined,
                                  uint64_t collBytes) const {
  Terms t;
  for (const Round& r : rounds) {
    RoundCost c = roundCost(r, collBytes);
    t.fixed += c.latency * r.repeat;
    t.rounds += r.repeat;
    t.wakes += (oversubscription(c, params_.cores) - 1) * r.repeat;
    t.transfer += transferSec(c, pipelined) * r.repeat;
  }
  return t;
}

double CostModel::price(const std::vector<Round>& rounds, std::string* worst,
                        const PriceOpts& opts) const {
  const AlgoFit* fit = opts.algo.empty() ? nullptr : params_.fit(opts.algo, fitTransport());
  const AlgoFit none;
  const AlgoFit& f = fit ? *fit : none;
  double total = f.baseUs * 1e-6, worstT = -1;
  for (const Round& r : rounds) {
    RoundCost c = roundCost(r, opts.collBytes);
    const double t = std::max(0.0, c.latency + f.roundUs * 1e-6 +
                                       f.wakeUs * 1e-6 * (oversubscription(c, params_.cores) - 1)) +
                     transferSec(c, opts.pipelined) / f.bwEff;
    total += t * r.repeat;
    if (worst && t * r.repeat > worstT) worstT = t * r.repeat, *worst = c.bottleneck;
  }
  return total;
}

CostModel::Terms CostModel::directTerms(uint64_t bytes) const {
  const int p = place_.nranks;
  const double cores = params_.cores > 0 ? params_.cores : p;
  const double osub = std::max(1.0, p / cores);
  const double copy = bytes ? bytes / (flowGBps(0, p > 1 ? 1 : 0, bytes, bytes) * 1e9) : 0;
  const double reduce = static_cast<double>(bytes) * p / (params_.reduceGBps * 1e9);
  Terms t;
  t.rounds = p - 1;
  t.wakes = osub - 1;
  t.transfer = (copy + reduce) * osub;
  return t;
}

double CostModel::priceDirect(uint64_t bytes) const {
  const AlgoFit* fit = params_.fit("direct", Transport::kShm);
  const AlgoFit f = fit ? *fit : AlgoFit();
  const Terms t = directTerms(bytes);
  return std::max(0.0, f.baseUs + f.roundUs * t.rounds + f.wakeUs * t.wakes) * 1e-6 +
         t.transfer / f.bwEff;
}

Status roundsFromSchedules(const std::vector<sched::Schedule>& all, std::vector<Round>* out) {
  using sched::OpKind;
  const int p = static_cast<int>(all.size());
  out->clear();
  std::vector<std::vector<int>> level(p);
  std::vector<size_t> next(p, 0);
  std::map<int64_t, std::vector<int>> sendLevels;    // (src * p + dst) -> levels in order
  std::map<int64_t, size_t> recvCount;               // (src * p + dst) -> receives matched
  std::map<int64_t, int> chainLevel;  // ((src * p + dst) * channels + channel) -> last level
  std::vector<std::map<int, uint64_t>> reduceAt(p);  // per rank: level -> reduced bytes
  for (int r = 0; r < p; ++r) level[r].assign(all[r].steps.size(), 0);
  auto flowAt = [&](int lv) -> Round& {
    if (static_cast<int>(out->size()) < lv) out->resize(lv);
    return (*out)[lv - 1];
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < p; ++r) {
      const sched::Schedule& s = all[r];
      for (; next[r] < s.steps.size(); ++next[r]) {
        const size_t i = next[r];
        const sched::Step& st = s.steps[i];
        int lv = 0;
        for (uint32_t k = 0; k < st.depCount; ++k)
          lv = std::max(lv, level[r][s.deps[st.depBegin + k]]);
        if (st.op == OpKind::kSend) {
          // FIFO per pair and channel: channels have connections of their own.
          auto& sl = sendLevels[int64_t(r) * p + st.peer];
          int& chain = chainLevel[(int64_t(r) * p + st.peer) * sched::kMaxChannels + st.channel];
          lv = std::max(lv, chain) + 1;
          chain = lv;
          sl.push_back(lv);
          flowAt(lv).flows.push_back({r, st.peer, st.bytes, st.channel});
        } else if (st.op == OpKind::kRecv || st.op == OpKind::kRecvReduce) {
          const int64_t key = int64_t(st.peer) * p + r;
          auto& sl = sendLevels[key];
          size_t& k = recvCount[key];
          if (k >= sl.size()) break;  // its send is not placed yet
          lv = std::max(lv, sl[k++]);
          if (st.op == OpKind::kRecvReduce) reduceAt[r][lv] += st.bytes;
        } else if (st.op == OpKind::kReduce) {
          reduceAt[r][lv] += st.bytes;
        }
        level[r][i] = lv;
        progress = true;
      }
    }
  }
  for (int r = 0; r < p; ++r) {
    if (next[r] != all[r].steps.size())
      return internalError("cost model: schedules of ", all[r].algo, " deadlock at rank ", r,
                           " step ", next[r]);
    for (auto& [lv, b] : reduceAt[r]) {
      if (lv == 0) continue;
      Round& rd = flowAt(lv);
      rd.reduceBytes = std::max(rd.reduceBytes, b);
      rd.reduceSum += b;
    }
  }
  return Status();
}

}  // namespace loom::plan
