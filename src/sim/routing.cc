#include "sim/routing.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace loom::sim {
namespace {

uint64_t mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

constexpr uint8_t kFar = std::numeric_limits<uint8_t>::max();

void flush(const std::unordered_map<int, double>& acc, std::vector<PathHop>* hops) {
  size_t first = hops->size();
  for (const auto& kv : acc) hops->push_back({kv.first, kv.second});
  std::sort(hops->begin() + first, hops->end(),
            [](const PathHop& a, const PathHop& b) { return a.link < b.link; });
}

}  // namespace

const char* routingName(RoutingMode m) {
  switch (m) {
    case RoutingMode::kEcmp:
      return "ecmp";
    case RoutingMode::kSpray:
      return "spray";
    case RoutingMode::kValiant:
      return "valiant";
    case RoutingMode::kUgal:
      return "ugal";
  }
  return "?";
}

Status parseRouting(const std::string& s, RoutingMode* out) {
  for (RoutingMode m :
       {RoutingMode::kEcmp, RoutingMode::kSpray, RoutingMode::kValiant, RoutingMode::kUgal}) {
    if (s == routingName(m)) {
      *out = m;
      return Status();
    }
  }
  if (s == "adaptive" || s == "minimal") {
    *out = RoutingMode::kSpray;
    return Status();
  }
  return invalidArgument("routing '", s, "': expected ecmp, spray (adaptive), valiant or ugal");
}

void Router::setBundles(bool on) {
  bundles_ = on;
  version_ = ~0ull;  // rebuild (and drop cached paths) on the next route
}

void Router::checkVersion() {
  if (version_ == net_->version()) return;
  dist_.clear();
  cache_.clear();
  middle_.clear();
  middleHops_ = 0;
  buildBundles();
  const std::vector<int32_t>& sws = net_->switches();
  inOff_.assign(sws.size() + 1, 0);
  inSw_.clear();
  for (size_t i = 0; i < sws.size(); ++i) {
    for (int l : net_->inLinks(sws[i])) {
      const Link& lk = net_->link(l);
      if (lk.up && net_->node(lk.from).kind == NodeKind::kSwitch)
        inSw_.push_back(net_->switchIndex(lk.from));
    }
    inOff_[i + 1] = static_cast<uint32_t>(inSw_.size());
  }
  groupSwitches_.assign(net_->maxGroup() + 1, {});
  for (int sw : net_->switches()) {
    const Node& n = net_->node(sw);
    if (n.group >= 0 && n.tier >= 2) groupSwitches_[n.group].push_back(sw);
  }
  version_ = net_->version();
}

void Router::buildBundles() {
  bundleOf_.assign(bundles_ ? net_->numLinks() : 0, -1);
  bundleMembers_.clear();
  seenAt_.clear();
  if (!bundles_) return;
  const Net& n = *net_;
  auto isSwitch = [&](int node) { return n.node(node).kind == NodeKind::kSwitch; };
  std::vector<int32_t> group;
  auto add = [&]() {
    if (group.size() < 2) return;
    for (int l : group)
      if (n.link(l).bytesPerSec != n.link(group[0]).bytesPerSec) return;
    for (int l : group) bundleOf_[l] = static_cast<int32_t>(bundleMembers_.size());
    bundleMembers_.push_back(group);
    seenAt_.push_back(0);
  };
  for (int sw : n.switches()) {
    const int tier = n.node(sw).tier;
    group.clear();  // up: sw -> the tier above
    for (int l : n.outLinks(sw)) {
      const Link& lk = n.link(l);
      if (lk.up && isSwitch(lk.to) && n.node(lk.to).tier > tier) group.push_back(l);
    }
    add();
    group.clear();  // down: the tier above -> sw
    for (int l : n.inLinks(sw)) {
      const Link& lk = n.link(l);
      if (lk.up && isSwitch(lk.from) && n.node(lk.from).tier > tier) group.push_back(l);
    }
    add();
  }
}

// Replaces the hops of every bundle the path crosses evenly (all members, equal weights) by its
// representative; false (hops unchanged) when it crosses one unevenly.
bool Router::compress(std::vector<PathHop>* hops) {
  if (bundleMembers_.empty()) return true;
  seen_.clear();
  bool even = true;
  for (const PathHop& h : *hops) {
    int32_t b = bundleOf_[h.link];
    if (b < 0) continue;
    if (seenAt_[b] == 0) {
      seen_.push_back({b, 1, h.weight});
      seenAt_[b] = static_cast<uint32_t>(seen_.size());
      continue;
    }
    Seen& x = seen_[seenAt_[b] - 1];
    // Weights are sums of the same shares in another order: equal up to rounding.
    if (std::abs(h.weight - x.weight) > 1e-12 * x.weight) even = false;
    ++x.count;
  }
  for (const Seen& x : seen_) {
    if (x.count != bundleMembers_[x.bundle].size()) even = false;
    seenAt_[x.bundle] = 0;
  }
  if (!even) return false;
  std::vector<PathHop> out;
  out.reserve(hops->size());
  for (const PathHop& h : *hops) {  // every member is there: keep the representatives
    int32_t b = bundleOf_[h.link];
    if (b < 0 || bundleMembers_[b].front() == h.link) out.push_back(h);
  }
  hops->swap(out);
  return true;
}

void Router::expandBundles(std::vector<double>* linkBytes) const {
  for (const std::vector<int32_t>& m : bundleMembers_)
    for (size_t i = 1; i < m.size(); ++i) (*linkBytes)[m[i]] = (*linkBytes)[m[0]];
}

const std::vector<uint8_t>& Router::distTo(int sw) {
  auto it = dist_.find(sw);
  if (it != dist_.end()) return it->second;
  std::vector<uint8_t>& d = dist_[sw];
  d.assign(net_->switches().size(), kFar);
  std::vector<int32_t> q;  // breadth-first, by switch index
  q.reserve(d.size());
  d[net_->switchIndex(sw)] = 0;
  q.push_back(net_->switchIndex(sw));
  for (size_t head = 0; head < q.size(); ++head) {
    const int32_t v = q[head];
    const uint8_t dv = d[v];
    for (uint32_t k = inOff_[v]; k < inOff_[v + 1]; ++k) {
      uint8_t& du = d[inSw_[k]];
      if (du != kFar) continue;
      du = static_cast<uint8_t>(dv + 1);
      q.push_back(inSw_[k]);
    }
  }
  return d;
}

Status Router::switchPathEcmp(int from, int to, uint64_t key, std::vector<PathHop>* hops,
                              int* nsw) {
  const std::vector<uint8_t>& d = distTo(to);
  if (d[net_->switchIndex(from)] == kFar)
    return invalidArgument("sim: no route from switch ", net_->node(from).name, " to ",
                           net_->node(to).name);
  *nsw += 1;
  int s = from;
  std::vector<int> cand;
  while (s != to) {
    uint8_t ds = d[net_->switchIndex(s)];
    cand.clear();
    for (int l : net_->outLinks(s)) {
      const Link& lk = net_->link(l);
      if (lk.up && net_->node(lk.to).kind == NodeKind::kSwitch &&
          d[net_->switchIndex(lk.to)] + 1 == ds)
        cand.push_back(l);
    }
    int l = cand[mix(key ^ mix(static_cast<uint64_t>(s))) % cand.size()];
    hops->push_back({l, 1.0});
    s = net_->link(l).to;
    *nsw += 1;
  }
  return Status();
}

Status Router::switchPathSpray(int from, int to, double scale, std::unordered_map<int, double>* acc,
                               int* nsw) {
  const std::vector<uint8_t>& d = distTo(to);
  if (d[net_->switchIndex(from)] == kFar)
    return invalidArgument("sim: no route from switch ", net_->node(from).name, " to ",
                           net_->node(to).name);
  *nsw += 1 + d[net_->switchIndex(from)];
  std::unordered_map<int, double> layer{{from, scale}}, next;
  std::vector<int> cand;
  while (!(layer.size() == 1 && layer.begin()->first == to)) {
    next.clear();
    for (const auto& [s, w] : layer) {
      uint8_t ds = d[net_->switchIndex(s)];
      cand.clear();
      for (int l : net_->outLinks(s)) {
        const Link& lk = net_->link(l);
        if (lk.up && net_->node(lk.to).kind == NodeKind::kSwitch &&
            d[net_->switchIndex(lk.to)] + 1 == ds)
          cand.push_back(l);
      }
      double share = w / static_cast<double>(cand.size());
      for (int l : cand) {
        (*acc)[l] += share;
        next[net_->link(l).to] += share;
      }
    }
    layer.swap(next);
  }
  return Status();
}

Status Router::valiantSpray(int from, int to, int srcGroup, int dstGroup, double scale,
                            std::unordered_map<int, double>* acc, int* nsw) {
  std::vector<int> mids;
  for (int g = 0; g < static_cast<int>(groupSwitches_.size()); ++g) {
    if (g == srcGroup || g == dstGroup || groupSwitches_[g].empty()) continue;
    const std::vector<int>& sw = groupSwitches_[g];
    int pick = sw[mix(seed_ ^ mix(static_cast<uint64_t>(from) * 1000003u + to + g)) % sw.size()];
    if (distTo(pick)[net_->switchIndex(from)] == kFar) continue;
    if (distTo(to)[net_->switchIndex(pick)] == kFar) continue;
    mids.push_back(pick);
  }
  if (mids.empty()) return switchPathSpray(from, to, scale, acc, nsw);
  int longest = 0;
  for (int m : mids) {
    int a = 0, b = 0;
    LOOM_CHECK(switchPathSpray(from, m, scale / mids.size(), acc, &a));
    LOOM_CHECK(switchPathSpray(m, to, scale / mids.size(), acc, &b));
    longest = std::max(longest, a + b - 1);
  }
  *nsw += longest;
  return Status();
}

Status Router::middle(int leafS, int leafD, bool crossGroup, const Middle** out) {
  const uint64_t key = (static_cast<uint64_t>(leafS) << 32) | static_cast<uint32_t>(leafD);
  auto it = middle_.find(key);
  if (it != middle_.end()) {
    *out = &it->second;
    return Status();
  }
  Middle m;
  std::unordered_map<int, double> acc;
  if (mode_ == RoutingMode::kSpray || !crossGroup) {
    LOOM_CHECK(switchPathSpray(leafS, leafD, 1.0, &acc, &m.switchHops));
  } else {
    const Node& a = net_->node(leafS);
    const Node& b = net_->node(leafD);
    LOOM_CHECK(valiantSpray(leafS, leafD, a.group, b.group, 1.0, &acc, &m.switchHops));
  }
  flush(acc, &m.hops);
  if (bundles_) m.even = compress(&m.hops);
  if (middleHops_ + m.hops.size() > kMaxMiddleHops) {  // full: this one is not kept
    spare_ = std::move(m);
    *out = &spare_;
    return Status();
  }
  middleHops_ += m.hops.size();
  *out = &middle_.emplace(key, std::move(m)).first->second;
  return Status();
}

Status Router::route(int srcGpu, int dstGpu, const double* linkLoad, Path* out) {
  checkVersion();
  uint64_t pairKey = (static_cast<uint64_t>(srcGpu) << 32) | static_cast<uint32_t>(dstGpu);
  bool ugal = mode_ == RoutingMode::kUgal;
  if (!ugal) {
    auto it = cache_.find(pairKey);
    if (it != cache_.end()) {
      *out = it->second;
      return Status();
    }
  }
  Path p;
  const Net& n = *net_;
  const Net::GpuLinks& gs = n.gpuLinks(srcGpu);
  const Net::GpuLinks& gd = n.gpuLinks(dstGpu);
  int hs = n.hostOfGpu(srcGpu), hd = n.hostOfGpu(dstGpu);
  p.intraNode = hs == hd;
  if (srcGpu == dstGpu) {
    // a self message: no link
  } else if (gs.domain == gd.domain) {
    p.nvlink = true;
    p.hops = {{gs.nvUp, 1.0}, {gd.nvDown, 1.0}};
  } else if (hs == hd) {
    p.hops = {{gs.pcieToRoot, 1.0}, {gd.pcieFromRoot, 1.0}};
  } else {
    int ns = n.nicOfGpu(srcGpu), nd = n.nicOfGpu(dstGpu);
    int up = n.nicUpLink(hs, ns), down = n.nicDownLink(hd, nd);
    if (up < 0 || down < 0 || !n.link(up).up || !n.link(down).up)
      return invalidArgument("sim: GPU ", srcGpu, " cannot reach GPU ", dstGpu,
                             ": NIC not cabled or down");
    int leafS = n.link(up).to, leafD = n.link(down).from;
    p.hops = {{gs.pcieToNic, 1.0}, {up, 1.0}};
    int gS = n.node(leafS).group, gD = n.node(leafD).group;
    bool crossGroup = gS >= 0 && gD >= 0 && gS != gD;
    if (mode_ == RoutingMode::kEcmp) {
      uint64_t key = mix(seed_ ^ mix(pairKey));
      LOOM_CHECK(switchPathEcmp(leafS, leafD, key, &p.hops, &p.switchHops));
    } else if (!ugal) {
      const Middle* m = nullptr;
      LOOM_CHECK(middle(leafS, leafD, crossGroup, &m));
      p.hops.insert(p.hops.end(), m->hops.begin(), m->hops.end());
      p.switchHops = m->switchHops;
      if (!m->even) violated_ = true;
    } else if (!crossGroup) {
      std::unordered_map<int, double> acc;
      LOOM_CHECK(switchPathSpray(leafS, leafD, 1.0, &acc, &p.switchHops));
      flush(acc, &p.hops);
    } else {
      std::unordered_map<int, double> accMin, accVal;
      int hMin = 0, hVal = 0;
      LOOM_CHECK(valiantSpray(leafS, leafD, gS, gD, 1.0, &accVal, &hVal));
      bool useVal = mode_ == RoutingMode::kValiant;
      if (ugal) {
        LOOM_CHECK(switchPathSpray(leafS, leafD, 1.0, &accMin, &hMin));
        auto cost = [&](const std::unordered_map<int, double>& acc, int h) {
          double q = 0;
          for (const auto& [l, w] : acc) {
            double load = linkLoad ? linkLoad[l] : 0.0;
            q = std::max(q, (load + w) / n.link(l).bytesPerSec);
          }
          return q * h;
        };
        useVal = cost(accVal, hVal) < cost(accMin, hMin);
      }
      flush(useVal ? accVal : accMin, &p.hops);
      p.switchHops = useVal ? hVal : hMin;
    }
    p.hops.push_back({down, 1.0});
    p.hops.push_back({gd.pcieFromNic, 1.0});
  }
  if (hs == hd && srcGpu != dstGpu && n.host(hs).sharedLink >= 0)
    p.hops.push_back({n.host(hs).sharedLink, 1.0});
  for (const PathHop& h : p.hops) {
    if (!n.link(h.link).up)
      return invalidArgument("sim: GPU ", srcGpu, " -> GPU ", dstGpu, " needs ", n.linkName(h.link),
                             ", which is down");
  }
  if (!ugal && cachePaths_) cache_[pairKey] = p;
  *out = std::move(p);
  return Status();
}

}  // namespace loom::sim
