#include "sim/report.h"

#include <algorithm>

namespace loom::sim {

double busFactor(sched::CollType c, int n) {
  if (n <= 1) return 1.0;
  switch (c) {
    case sched::CollType::kAllReduce:
      return 2.0 * (n - 1) / n;
    case sched::CollType::kAllGather:
    case sched::CollType::kReduceScatter:
    case sched::CollType::kAllToAll:
      return static_cast<double>(n - 1) / n;
    default:
      return 1.0;
  }
}

std::vector<LevelUtil> utilisationByLevel(const Net& net, const SimResult& r) {
  std::vector<LevelUtil> out(kNumLinkLevels);
  for (int i = 0; i < kNumLinkLevels; ++i) out[i].level = static_cast<LinkLevel>(i);
  for (int l = 0; l < net.numLinks(); ++l) {
    const Link& lk = net.link(l);
    if (!lk.up) continue;
    LevelUtil& u = out[static_cast<int>(lk.level)];
    double x = r.utilisation(net, l);
    ++u.links;
    u.mean += x;
    u.max = std::max(u.max, x);
    u.sorted.push_back(x);
  }
  std::vector<LevelUtil> kept;
  for (LevelUtil& u : out) {
    if (u.links == 0) continue;
    u.mean /= u.links;
    std::sort(u.sorted.begin(), u.sorted.end(), std::greater<double>());
    kept.push_back(std::move(u));
  }
  return kept;
}

std::vector<GroupUtil> utilisationByGroup(const Net& net, const SimResult& r) {
  std::vector<GroupUtil> g(net.maxGroup() + 1);
  std::vector<int> nG(g.size(), 0), nL(g.size(), 0);
  for (size_t i = 0; i < g.size(); ++i) g[i].group = static_cast<int>(i);
  for (int l = 0; l < net.numLinks(); ++l) {
    const Link& lk = net.link(l);
    const Node& from = net.node(lk.from);
    if (!lk.up || from.kind != NodeKind::kSwitch || from.group < 0) continue;
    if (net.node(lk.to).kind != NodeKind::kSwitch) continue;
    double x = r.utilisation(net, l);
    GroupUtil& u = g[from.group];
    if (lk.level == LinkLevel::kGlobal) {
      u.meanGlobal += x;
      u.maxGlobal = std::max(u.maxGlobal, x);
      ++nG[from.group];
    } else {
      u.meanLocal += x;
      u.maxLocal = std::max(u.maxLocal, x);
      ++nL[from.group];
    }
  }
  for (size_t i = 0; i < g.size(); ++i) {
    if (nG[i]) g[i].meanGlobal /= nG[i];
    if (nL[i]) g[i].meanLocal /= nL[i];
  }
  return g;
}

std::vector<BusyLink> busiestLinks(const Net& net, const SimResult& r, int k) {
  std::vector<BusyLink> all;
  for (int l = 0; l < net.numLinks(); ++l)
    if (r.linkBytes[l] > 0) all.push_back({l, r.utilisation(net, l), r.linkBytes[l]});
  size_t n = std::min<size_t>(k, all.size());
  std::partial_sort(
      all.begin(), all.begin() + n, all.end(),
      [](const BusyLink& a, const BusyLink& b) { return a.utilisation > b.utilisation; });
  all.resize(n);
  return all;
}

}  // namespace loom::sim
