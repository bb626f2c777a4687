// Human summary of a Topology (loom-topo's default output).
#include <cstdio>
#include <sstream>

#include "topo/classify.h"

namespace loom::topo {

namespace {
std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

void hostSummary(std::ostringstream& o, const Host& h) {
  o << "host " << h.name << ": " << h.packages << " package(s), " << h.numa.size()
    << " NUMA node(s), " << h.cores << " cores, " << h.pus << " PUs, " << h.gpus.size()
    << " GPU(s), " << h.nics.size() << " NIC(s), " << h.pciSwitches << " PCI switch port(s)";
  if (h.nvswitches) o << ", " << h.nvswitches << " NVSwitch(es)";
  o << "\n";
  for (const NumaNode& n : h.numa) {
    o << "  numa " << n.osIndex << " (package " << n.package << "): " << n.cores << " cores, "
      << n.cpus.size() << " PUs, " << fmt(n.memoryBytes / 1073741824.0) << " GiB\n";
  }
  for (const Gpu& g : h.gpus) {
    o << "  gpu " << g.index << " " << g.pci.busId << " " << g.name << " numa " << g.pci.numa
      << "\n";
  }
  for (const Nic& n : h.nics) {
    o << "  nic " << n.index << " " << n.name << (n.pci.busId.empty() ? "" : " ") << n.pci.busId;
    for (const std::string& d : n.netdevs) o << " " << d;
    if (n.portGBps > 0) o << " " << fmt(n.portGBps) << " GB/s";
    if (n.rail >= 0) o << " rail " << n.rail;
    o << "\n";
  }
  auto paths = [&](const char* what, const std::vector<DevicePath>& v) {
    for (const DevicePath& p : v) {
      o << "  " << what << " " << p.a << "-" << p.b << ": " << pathClassName(p.cls) << " "
        << fmt(p.gbps) << " GB/s";
      if (p.nvlinks) o << " (" << p.nvlinks << " NVLinks)";
      o << "\n";
    }
  };
  paths("gpu-nic", h.gpuNic);
  paths("gpu-gpu", h.gpuGpu);
}
}  // namespace

std::string summary(const Topology& t) {
  std::ostringstream o;
  int detailed = 0;
  for (const Host& h : t.hosts) {
    if (h.pus == 0 && h.gpus.empty()) continue;  // fabric-only host
    if (++detailed > 4) continue;
    hostSummary(o, h);
  }
  if (detailed > 4) o << "(" << detailed - 4 << " more hosts with node details)\n";
  const Fabric& f = t.fabric;
  const Classification& c = t.cls;
  if (f.nodes.empty()) {
    o << "fabric: none\n";
    return o.str();
  }
  o << "fabric: " << fabricTypeName(c.type) << " from " << f.source << "\n";
  o << "  " << c.switches << " switches, " << f.numNodes() - f.numSwitches << " CAs, "
    << f.links.size() << " links, " << c.hosts << " hosts\n";
  o << "  parts: " << countsLine(countFabric(t)) << "\n";
  if (c.type == FabricType::kFatTree) {
    o << "  levels: " << c.levels << "\n";
    for (const LevelInfo& l : c.perLevel) {
      o << "  level " << l.level << ": " << l.switches << " switches, " << l.downLinks << " down / "
        << l.upLinks << " up links";
      if (l.upLinks) o << ", oversubscription " << fmt(l.oversubscription) << ":1";
      o << "\n";
    }
  } else if (c.type == FabricType::kDragonflyPlus) {
    o << "  groups: " << c.groups.size() << " (" << c.leavesPerGroup << " leaves, "
      << c.spinesPerGroup << " spines each), " << c.hostsPerLeaf << " hosts per leaf, "
      << c.globalLinksPerSpine << " global links per spine\n";
    o << "  group pairs with global links: " << c.groupPairs.size() << ", global/host bandwidth "
      << fmt(c.taper) << (c.tapered ? " (tapered)" : " (not tapered)") << "\n";
  } else {
    o << "  levels (BFS from leaves): " << c.levels << "\n";
  }
  if (c.rails > 1) o << "  rails: " << c.rails << "\n";
  for (const std::string& s : c.oddities) o << "  odd: " << s << "\n";
  return o.str();
}

}  // namespace loom::topo
