#include "sim/whatif.h"

#include <algorithm>
#include <cstdlib>
#include <random>

namespace loom::sim {
namespace {

Status parseCount(const std::string& item, const std::string& v, int* out) {
  char* end = nullptr;
  long k = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || k < 0)
    return invalidArgument("--fail \"", item, "\": expected a count, got \"", v, "\"");
  *out = static_cast<int>(k);
  return Status();
}

// Removes k random members of `pool` (link pair ids or switch nodes).
template <typename Fn>
Status pickRandom(const std::string& item, std::vector<int> pool, int k, std::mt19937_64* rng,
                  Fn apply) {
  if (k > static_cast<int>(pool.size()))
    return invalidArgument("--fail \"", item, "\": only ", pool.size(), " candidates");
  std::shuffle(pool.begin(), pool.end(), *rng);
  for (int i = 0; i < k; ++i) apply(pool[i]);
  return Status();
}

}  // namespace

Status applyFailures(const std::string& spec, uint64_t seed, Net* net,
                     std::vector<std::string>* done) {
  std::mt19937_64 rng(seed);
  size_t pos = 0;
  while (pos < spec.size()) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string::npos) comma = spec.size();
    std::string item = spec.substr(pos, comma - pos);
    pos = comma + 1;
    size_t colon = item.find(':');
    if (colon == std::string::npos)
      return invalidArgument("--fail \"", item, "\": expected kind:value");
    std::string kind = item.substr(0, colon), v = item.substr(colon + 1);
    auto downSwitch = [&](int sw) {
      net->setSwitchUp(sw, false);
      done->push_back(strCat("switch ", net->node(sw).name, " down"));
    };
    auto downPair = [&](int l) {
      net->setLinkUp(l, false);
      net->setLinkUp(l ^ 1, false);
      done->push_back(strCat("cable ", net->linkName(l), " down"));
    };
    if (kind == "switch") {
      int found = -1;
      for (int sw : net->switches())
        if (net->node(sw).name == v) found = sw;
      if (found < 0) return invalidArgument("--fail \"", item, "\": no switch named ", v);
      downSwitch(found);
    } else if (kind == "spines" || kind == "leaves") {
      int k;
      LOOM_CHECK(parseCount(item, v, &k));
      std::vector<int> pool;
      for (int sw : net->switches()) {
        int tier = net->node(sw).tier;
        if ((kind == "spines") == (tier >= 2)) pool.push_back(sw);
      }
      LOOM_CHECK(pickRandom(item, pool, k, &rng, downSwitch));
    } else if (kind == "links" || kind == "global") {
      int k;
      LOOM_CHECK(parseCount(item, v, &k));
      std::vector<int> pool;
      for (int l = 0; l < net->numLinks(); l += 2) {  // pairs: even id = a->b
        const Link& lk = net->link(l);
        bool sw = net->node(lk.from).kind == NodeKind::kSwitch &&
                  net->node(lk.to).kind == NodeKind::kSwitch;
        if (sw && lk.up && (kind == "links" || lk.level == LinkLevel::kGlobal)) pool.push_back(l);
      }
      LOOM_CHECK(pickRandom(item, pool, k, &rng, downPair));
    } else if (kind == "level") {
      size_t eq = v.find('=');
      int lv = -1;
      for (int i = 0; i < kNumLinkLevels; ++i)
        if (v.substr(0, eq) == linkLevelName(static_cast<LinkLevel>(i))) lv = i;
      double f = eq == std::string::npos ? -1 : std::atof(v.c_str() + eq + 1);
      if (lv < 0 || f <= 0)
        return invalidArgument("--fail \"", item, "\": expected level:NAME=FACTOR (FACTOR > 0)");
      net->scaleLevel(static_cast<LinkLevel>(lv), f);
      done->push_back(strCat("level ", v.substr(0, eq), " scaled by ", f));
    } else {
      return invalidArgument("--fail \"", item,
                             "\": kind must be switch, spines, leaves, links, global or level");
    }
  }
  return Status();
}

}  // namespace loom::sim
