#include "algo/registry.h"

namespace loom::algo {

const std::vector<AlgoInfo>& registry() {
  static const std::vector<AlgoInfo> kAll = {
#define LOOM_ALGO(coll, name, fn) {CollType::coll, name, &fn},
#include "algo/registry.def"
#undef LOOM_ALGO
  };
  return kAll;
}

const AlgoInfo* findAlgo(CollType coll, const std::string& name) {
  for (const AlgoInfo& a : registry())
    if (a.coll == coll && name == a.name) return &a;
  return nullptr;
}

std::vector<const AlgoInfo*> algosFor(CollType coll) {
  std::vector<const AlgoInfo*> out;
  for (const AlgoInfo& a : registry())
    if (a.coll == coll) out.push_back(&a);
  return out;
}

}  // namespace loom::algo
