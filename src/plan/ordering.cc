#include "plan/ordering.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

namespace loom::plan {

const char* levelName(Level l) {
  switch (l) {
    case Level::kHost:
      return "host";
    case Level::kLeaf:
      return "leaf";
    case Level::kGroup:
      return "group";
  }
  return "?";
}

std::vector<int> identityOrder(int p) {
  std::vector<int> o(p);
  std::iota(o.begin(), o.end(), 0);
  return o;
}

bool isIdentity(const std::vector<int>& order) {
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] != static_cast<int>(i)) return false;
  return true;
}

std::vector<int> topologyOrder(const CostModel& model) {
  const Placement& pl = model.placement();
  std::vector<int> o = identityOrder(pl.nranks);
  std::stable_sort(o.begin(), o.end(), [&](int a, int b) {
    return std::make_tuple(model.groupOfRank(a), model.leafOfRank(a), pl.hostOf[a]) <
           std::make_tuple(model.groupOfRank(b), model.leafOfRank(b), pl.hostOf[b]);
  });
  return o;
}

std::vector<int> partitionAt(const CostModel& model, Level level) {
  const Placement& pl = model.placement();
  std::vector<int> parts(pl.nranks);
  for (int r = 0; r < pl.nranks; ++r) {
    int leaf = model.leafOfRank(r), group = model.groupOfRank(r);
    if (level == Level::kGroup && group >= 0)
      parts[r] = group;
    else if (level != Level::kHost && leaf >= 0)
      parts[r] = leaf;
    else
      parts[r] = pl.hostOf[r];
    // Keep levels apart so a fallback to the host id never merges with a leaf id.
    parts[r] = parts[r] * 3 + (level == Level::kHost || leaf < 0 ? 0 : static_cast<int>(level));
  }
  return parts;
}

int numParts(const std::vector<int>& parts, int* smallest) {
  std::map<int, int> n;
  for (int x : parts) ++n[x];
  if (smallest) {
    *smallest = parts.empty() ? 0 : static_cast<int>(parts.size());
    for (auto& [k, v] : n) *smallest = std::min(*smallest, v);
  }
  return static_cast<int>(n.size());
}

}  // namespace loom::plan
