// What a fabric costs in parts: switches (by level), switch ports in use, and cables (host
// cables, switch-to-switch cables, Dragonfly+ global cables). Counted from the links, so it holds
// for generated, loaded and discovered fabrics alike.
#include "topo/classify.h"

namespace loom::topo {

FabricCounts countFabric(const Topology& t) {
  FabricCounts c;
  const Fabric& f = t.fabric;
  for (const FabricNode& n : f.nodes) {
    if (n.kind != NodeKind::kSwitch) continue;
    ++c.switches;
    if (n.level >= 1 && n.level <= 3) ++c.switchesPerLevel[n.level - 1];
  }
  for (const Link& l : f.links) {
    if (!l.up) continue;
    const bool sa = f.isSwitch(l.a), sb = f.isSwitch(l.b);
    c.switchPorts += (sa ? 1 : 0) + (sb ? 1 : 0);
    if (sa && sb) {
      ++c.switchCables;
      if (l.global) ++c.globalCables;
    } else if (sa || sb) {
      ++c.hostCables;
    }
  }
  return c;
}

std::string countsLine(const FabricCounts& c) {
  std::string s = strCat(c.switches, " switches");
  if (c.switchesPerLevel[0] || c.switchesPerLevel[1] || c.switchesPerLevel[2]) {
    s += strCat(" (", c.switchesPerLevel[0], " leaf, ", c.switchesPerLevel[1], " spine");
    if (c.switchesPerLevel[2]) s += strCat(", ", c.switchesPerLevel[2], " core");
    s += ")";
  }
  s += strCat(", ", c.switchPorts, " switch ports in use, ", c.hostCables + c.switchCables,
              " cables (", c.hostCables, " host, ", c.switchCables, " switch-switch");
  if (c.globalCables) s += strCat(" of which ", c.globalCables, " global");
  return s + ")";
}

}  // namespace loom::topo
