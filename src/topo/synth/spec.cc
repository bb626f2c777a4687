// "fat-tree:levels=3,pods=4,cores=16" / "dragonfly:groups=8,hostsPerLeaf=4" -> generator call.
#include <cstdlib>
#include <map>

#include "topo/synth/synth.h"

namespace loom::topo::synth {

namespace {
Status parseKeyValues(const std::string& spec, const std::string& body,
                      std::map<std::string, std::string>* kv) {
  size_t pos = 0;
  while (pos < body.size()) {
    size_t comma = body.find(',', pos);
    if (comma == std::string::npos) comma = body.size();
    std::string item = body.substr(pos, comma - pos);
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return invalidArgument("generator spec \"", spec, "\": expected key=value, got \"", item,
                             "\"");
    }
    (*kv)[item.substr(0, eq)] = item.substr(eq + 1);
    pos = comma + 1;
  }
  return Status();
}

Status takeInt(const std::string& spec, std::map<std::string, std::string>* kv, const char* key,
               int* out) {
  auto it = kv->find(key);
  if (it == kv->end()) return Status();
  char* end = nullptr;
  long v = std::strtol(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0' || v < 0 || v > 1000000) {
    return invalidArgument("generator spec \"", spec, "\": ", key,
                           " expects a non-negative integer, got \"", it->second, "\"");
  }
  *out = static_cast<int>(v);
  kv->erase(it);
  return Status();
}

void takeStr(std::map<std::string, std::string>* kv, const char* key, std::string* out) {
  auto it = kv->find(key);
  if (it == kv->end()) return;
  *out = it->second;
  kv->erase(it);
}

Status leftovers(const std::string& spec, const std::map<std::string, std::string>& kv) {
  if (kv.empty()) return Status();
  return invalidArgument("generator spec \"", spec, "\": unknown key \"", kv.begin()->first, "\"");
}
}  // namespace

Status generateFromSpec(const std::string& spec, Topology* out) {
  size_t colon = spec.find(':');
  std::string kind = spec.substr(0, colon);
  std::map<std::string, std::string> kv;
  if (colon != std::string::npos) LOOM_CHECK(parseKeyValues(spec, spec.substr(colon + 1), &kv));
  if (kind == "fat-tree" || kind == "fattree") {
    FatTreeParams p;
    LOOM_CHECK(takeInt(spec, &kv, "levels", &p.levels));
    LOOM_CHECK(takeInt(spec, &kv, "pods", &p.pods));
    LOOM_CHECK(takeInt(spec, &kv, "leavesPerPod", &p.leavesPerPod));
    LOOM_CHECK(takeInt(spec, &kv, "spinesPerPod", &p.spinesPerPod));
    LOOM_CHECK(takeInt(spec, &kv, "cores", &p.cores));
    LOOM_CHECK(takeInt(spec, &kv, "hostsPerLeaf", &p.hostsPerLeaf));
    LOOM_CHECK(takeInt(spec, &kv, "rails", &p.rails));
    LOOM_CHECK(takeInt(spec, &kv, "linksPerLeafSpine", &p.linksPerLeafSpine));
    LOOM_CHECK(takeInt(spec, &kv, "width", &p.width));
    takeStr(&kv, "speed", &p.speed);
    LOOM_CHECK(leftovers(spec, kv));
    return generateFatTree(p, out);
  }
  if (kind == "dragonfly" || kind == "dragonfly+") {
    DragonflyParams p;
    LOOM_CHECK(takeInt(spec, &kv, "groups", &p.groups));
    LOOM_CHECK(takeInt(spec, &kv, "leavesPerGroup", &p.leavesPerGroup));
    LOOM_CHECK(takeInt(spec, &kv, "spinesPerGroup", &p.spinesPerGroup));
    LOOM_CHECK(takeInt(spec, &kv, "hostsPerLeaf", &p.hostsPerLeaf));
    LOOM_CHECK(takeInt(spec, &kv, "globalLinksPerSpine", &p.globalLinksPerSpine));
    LOOM_CHECK(takeInt(spec, &kv, "linksPerLeafSpine", &p.linksPerLeafSpine));
    LOOM_CHECK(takeInt(spec, &kv, "rails", &p.rails));
    LOOM_CHECK(takeInt(spec, &kv, "width", &p.width));
    takeStr(&kv, "speed", &p.speed);
    takeStr(&kv, "globalSpeed", &p.globalSpeed);
    LOOM_CHECK(leftovers(spec, kv));
    return generateDragonfly(p, out);
  }
  return invalidArgument("generator spec \"", spec,
                         "\": expected \"fat-tree:key=value,...\" or \"dragonfly:key=value,...\"");
}

}  // namespace loom::topo::synth
