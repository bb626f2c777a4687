#include "plan/cost_model.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>

namespace loom::plan {

const char* transportName(Transport t) {
  switch (t) {
    case Transport::kShm:
      return "shm";
    case Transport::kTcp:
      return "tcp";
    case Transport::kNet:
      return "net";
  }
  return "?";
}

const char* pathKindName(PathKind k) {
  switch (k) {
    case PathKind::kLocal:
      return "local";
    case PathKind::kLeaf:
      return "leaf";
    case PathKind::kSpine:
      return "spine";
    case PathKind::kGlobal:
      return "global";
    case PathKind::kFlat:
      return "flat";
  }
  return "?";
}

namespace {
struct ParamField {
  const char* key;
  double CostParams::*field;
};
const ParamField kFields[] = {
    {"shmAlphaUs", &CostParams::shmAlphaUs},
    {"shmGBps", &CostParams::shmGBps},
    {"hostMemGBps", &CostParams::hostMemGBps},
    {"tcpAlphaUs", &CostParams::tcpAlphaUs},
    {"tcpGBps", &CostParams::tcpGBps},
    {"netAlphaUs", &CostParams::netAlphaUs},
    {"switchHopUs", &CostParams::switchHopUs},
    {"netGBps", &CostParams::netGBps},
    {"reduceGBps", &CostParams::reduceGBps},
    {"cores", &CostParams::cores},
    {"shmCmaGBps", &CostParams::shmCmaGBps},
    {"shmCmaBytes", &CostParams::shmCmaBytes},
    {"shmEagerBytes", &CostParams::shmEagerBytes},
    {"shmBigAlphaUs", &CostParams::shmBigAlphaUs},
    {"shmCacheBytes", &CostParams::shmCacheBytes},
    {"shmCacheGBps", &CostParams::shmCacheGBps},
    {"tcpEagerBytes", &CostParams::tcpEagerBytes},
    {"tcpBigAlphaUs", &CostParams::tcpBigAlphaUs},
    {"tcpCacheBytes", &CostParams::tcpCacheBytes},
    {"tcpCacheGBps", &CostParams::tcpCacheGBps},
};
// Keys whose value may be 0 (the term is off).
bool zeroAllowed(const std::string& k) {
  for (const char* z : {"cores", "shmCmaGBps", "shmBigAlphaUs", "shmCacheGBps", "tcpBigAlphaUs",
                        "tcpCacheGBps", "shmEagerBytes", "tcpEagerBytes"})
    if (k == z) return true;
  return false;
}
struct FitField {
  const char* key;
  double AlgoFit::*field;
};
const FitField kFitFields[] = {{"baseUs", &AlgoFit::baseUs},
                               {"roundUs", &AlgoFit::roundUs},
                               {"wakeUs", &AlgoFit::wakeUs},
                               {"bwEff", &AlgoFit::bwEff}};

// "fit.ring.shm.baseUs" = v into out->fits["ring.shm"].baseUs; false when the key is not one.
bool parseFitKey(const std::string& k, double v, CostParams* out) {
  if (k.rfind("fit.", 0) != 0) return false;
  const size_t dot = k.rfind('.');
  const std::string which = k.substr(4, dot - 4), field = k.substr(dot + 1);
  if (dot <= 4 || which.find('.') == std::string::npos) return false;
  for (const FitField& f : kFitFields)
    if (field == f.key) return out->fits[which].*f.field = v, true;
  return false;
}

// "tuned.shm.4.98304" = "tree" into out->tuned["shm.4"][98304].
Status parseTuned(const std::string& k, const std::string& v, CostParams* out) {
  const std::string rest = k.substr(6);
  const size_t d1 = rest.find('.'), d2 = rest.find('.', d1 + 1);
  const std::string tr = rest.substr(0, d1);
  char* end = nullptr;
  const std::string ranks = d1 == rest.npos ? "" : rest.substr(d1 + 1, d2 - d1 - 1);
  const std::string upTo = d2 == rest.npos ? "" : rest.substr(d2 + 1);
  const long n = std::strtol(ranks.c_str(), &end, 10);
  const bool ranksOk = !ranks.empty() && *end == 0 && n >= 1;
  const unsigned long long b = std::strtoull(upTo.c_str(), &end, 10);
  if ((tr != "shm" && tr != "tcp") || !ranksOk || upTo.empty() || *end != 0)
    return invalidArgument("cost params: '", k, "' is not tuned.<shm|tcp>.<ranks>.<upToBytes>");
  if (v.empty() || v.find_first_not_of("abcdefghijklmnopqrstuvwxyz_0123456789") != v.npos)
    return invalidArgument("cost params: bad algorithm '", v, "' for ", k);
  out->tuned[strCat(tr, ".", n)][b] = v;
  return Status();
}
}  // namespace

std::string CostParams::tunedAlgo(Transport t, int nranks, uint64_t bytes) const {
  auto it = tuned.find(strCat(transportName(t), ".", nranks));
  if (it == tuned.end()) return "";
  auto b = it->second.lower_bound(bytes);  // first bucket whose upper bound is >= bytes
  return b == it->second.end() ? "" : b->second;
}

const AlgoFit* CostParams::fit(const std::string& algo, Transport t) const {
  auto it = fits.find(strCat(algo, ".", transportName(t)));
  return it == fits.end() ? nullptr : &it->second;
}

std::string CostParams::toString() const {
  std::ostringstream os;
  for (const ParamField& f : kFields)
    os << (&f == kFields ? "" : ",") << f.key << "=" << this->*f.field;
  for (const auto& [which, fit] : fits)
    for (const FitField& f : kFitFields)
      os << ",fit." << which << "." << f.key << "=" << fit.*f.field;
  for (const auto& [which, buckets] : tuned)
    for (const auto& [upTo, algo] : buckets) os << ",tuned." << which << "." << upTo << "=" << algo;
  return os.str();
}

Status CostParams::parse(const std::string& text, CostParams* out) {
  // Accepts "k=v,k=v" and the flat JSON object {"k": v, ...}: strip JSON punctuation first.
  std::string t;
  for (char c : text) {
    if (c == '{' || c == '}' || c == '"' || c == ' ' || c == '\n' || c == '\t') continue;
    t += c == ':' ? '=' : c;
  }
  std::stringstream ss(t);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      return invalidArgument("cost params: '", item, "' is not key=value");
    std::string k = item.substr(0, eq);
    if (k.rfind("tuned.", 0) == 0) {
      LOOM_CHECK(parseTuned(k, item.substr(eq + 1), out));
      continue;
    }
    char* end = nullptr;
    double v = std::strtod(item.c_str() + eq + 1, &end);
    // cores (0: unlimited), baseUs and roundUs may be 0; only roundUs may be negative (a fit that
    // takes part of alpha back: the per-round cost never goes below 0, see price()).
    const bool fit = k.rfind("fit.", 0) == 0;
    const bool zeroOk = zeroAllowed(k) || (fit && k.find("bwEff") == k.npos);
    const bool negOk = fit && k.size() > 8 && k.compare(k.size() - 8, 8, ".roundUs") == 0;
    if (end == item.c_str() + eq + 1 || *end != 0 || (v < 0 && !negOk) || (v == 0 && !zeroOk))
      return invalidArgument("cost params: bad value for ", k);
    bool found = parseFitKey(k, v, out);
    for (const ParamField& f : kFields)
      if (k == f.key) out->*f.field = v, found = true;
    if (!found) return invalidArgument("cost params: unknown key '", k, "'");
  }
  return Status();
}

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

double CostModel::flowGBps(int a, int b, uint64_t bytes) const {
  const bool cached = bytes > 0;
  if (pathKind(a, b) == PathKind::kLocal) {
    if (params_.shmCmaGBps > 0 && bytes >= params_.shmCmaBytes) return params_.shmCmaGBps;
    return cached && params_.shmCacheGBps > 0 && bytes <= params_.shmCacheBytes
               ? params_.shmCacheGBps
               : params_.shmGBps;
  }
  double link = cap_[nic_[a]] / 1e9;
  if (place_.interHost != Transport::kTcp) return link;
  const double tcp = cached && params_.tcpCacheGBps > 0 && bytes <= params_.tcpCacheBytes
                         ? params_.tcpCacheGBps
                         : params_.tcpGBps;
  return leaf_[a] < 0 ? tcp : std::min(link, tcp);  // without a fabric the NIC runs at tcp's rate
}

RoundCost CostModel::roundCost(const Round& round) const {
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
  std::unordered_map<int, bool> active;
  for (const Flow& f : round.flows) {
    // An empty message (a segment of a count smaller than the rank count) is still sent and
    // waited for: it costs its latency and wakes its ranks, nothing else.
    lat[f.src] += alpha(f.src, f.dst, f.bytes);
    active[f.src] = active[f.dst] = true;
    if (f.bytes == 0) continue;
    const double rate = flowGBps(f.src, f.dst, f.bytes);
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
  double latSum = 0;
  for (auto& [r, a] : lat) c.latency = std::max(c.latency, a), latSum += a;
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
    c.latency = std::max(c.latency, latSum / cores);
    if (cpuSec / cores > c.bandwidth)
      c.bandwidth = cpuSec / cores, c.bottleneck = strCat("cpu (", cores, " cores)");
    c.compute = std::max(c.compute, round.reduceSum / (params_.reduceGBps * 1e9) / cores);
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
  return pipelined ? std::max(c.bandwidth, c.compute) : c.bandwidth + c.compute;
}
// How many times over the round's active ranks oversubscribe the shared cores (1 without).
double oversubscription(const RoundCost& c, double cores) {
  return cores > 0 ? std::max(1.0, c.activeRanks / cores) : 1.0;
}
}  // namespace

CostModel::Terms CostModel::terms(const std::vector<Round>& rounds, bool pipelined) const {
  Terms t;
  for (const Round& r : rounds) {
    RoundCost c = roundCost(r);
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
    RoundCost c = roundCost(r);
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
  const double copy = bytes ? bytes / (flowGBps(0, p > 1 ? 1 : 0, bytes) * 1e9) : 0;
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
          auto& sl = sendLevels[int64_t(r) * p + st.peer];
          lv = std::max(lv, sl.empty() ? 0 : sl.back()) + 1;
          sl.push_back(lv);
          flowAt(lv).flows.push_back({r, st.peer, st.bytes});
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
