#include "algo/registry.h"

namespace loom::algo {

const std::vector<AlgoInfo>& registry() {
  static const std::vector<AlgoInfo> kAll = {
#define LOOM_ALGO(coll, name, fn) {CollType::coll, name, &fn, false},
#define LOOM_HOST_ALGO(coll, name, fn) {CollType::coll, name, &fn, true},
#include "algo/registry.def"
#undef LOOM_HOST_ALGO
#undef LOOM_ALGO
  };
  return kAll;
}

const AlgoInfo* findAlgo(CollType coll, const std::string& name) {
  for (const AlgoInfo& a : registry())
    if (a.coll == coll && name == a.name) return &a;
  return nullptr;
}

std::vector<const AlgoInfo*> algosFor(CollType coll, bool withHost) {
  std::vector<const AlgoInfo*> out;
  for (const AlgoInfo& a : registry())
    if (a.coll == coll && (withHost || !a.host)) out.push_back(&a);
  return out;
}

}  // namespace loom::algo
