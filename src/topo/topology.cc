// Topology helpers: names of enums, link rates, adjacency, validation and equality.
#include "topo/topology.h"

#include <algorithm>
#include <cstring>

namespace loom::topo {

namespace {
const char* const kPathNames[] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB",
                                  "P2C", "PXN", "PHB", "SYS", "NET"};
const char* const kRoleNames[] = {"unknown", "host", "leaf", "spine", "core"};
const char* const kKindNames[] = {"switch", "ca", "router"};
const char* const kTypeNames[] = {"none", "fat-tree", "dragonfly+", "generic"};

struct SpeedRate {
  const char* name;
  double laneGbps;  // data rate per lane (after encoding), Gb/s
};
// 4x rates: SDR 8, DDR 16, QDR 32, FDR10 40, FDR 54.5, EDR 100, HDR 200, NDR 400, XDR 800 Gb/s.
const SpeedRate kSpeeds[] = {{"SDR", 2},  {"DDR", 4},  {"QDR", 8},   {"FDR10", 10}, {"FDR", 13.625},
                             {"EDR", 25}, {"HDR", 50}, {"NDR", 100}, {"XDR", 200}};
}  // namespace

const char* pathClassName(PathClass c) {
  int i = static_cast<int>(c);
  return (i >= 0 && i <= 10) ? kPathNames[i] : "?";
}

bool parsePathClass(const std::string& name, PathClass* out) {
  for (int i = 0; i <= 10; ++i) {
    if (name == kPathNames[i]) {
      *out = static_cast<PathClass>(i);
      return true;
    }
  }
  return false;
}

const char* nodeKindName(NodeKind k) {
  int i = static_cast<int>(k);
  return (i >= 0 && i <= 2) ? kKindNames[i] : "?";
}

const char* roleName(Role r) {
  int i = static_cast<int>(r);
  return (i >= 0 && i <= 4) ? kRoleNames[i] : "?";
}

const char* fabricTypeName(FabricType t) {
  int i = static_cast<int>(t);
  return (i >= 0 && i <= 3) ? kTypeNames[i] : "?";
}

bool parseFabricType(const std::string& name, FabricType* out) {
  for (int i = 0; i <= 3; ++i) {
    if (name == kTypeNames[i]) {
      *out = static_cast<FabricType>(i);
      return true;
    }
  }
  return false;
}

double laneGbps(const std::string& speed) {
  for (const SpeedRate& s : kSpeeds) {
    if (speed == s.name) return s.laneGbps;
  }
  return 0;
}

double linkGBps(int width, const std::string& speed) { return width * laneGbps(speed) / 8.0; }

void Fabric::rebuildAdjacency() {
  for (FabricNode& n : nodes) n.links.clear();
  const int nn = numNodes();
  for (int i = 0; i < static_cast<int>(links.size()); ++i) {
    const Link& l = links[i];
    if (l.a >= 0 && l.a < nn) nodes[l.a].links.push_back(i);
    if (l.b >= 0 && l.b < nn && l.b != l.a) nodes[l.b].links.push_back(i);
  }
  for (int id = 0; id < nn; ++id) {
    std::vector<int>& v = nodes[id].links;
    auto portOf = [&](int li) { return links[li].a == id ? links[li].portA : links[li].portB; };
    std::sort(v.begin(), v.end(), [&](int x, int y) {
      int px = portOf(x), py = portOf(y);
      return px != py ? px < py : x < y;
    });
  }
}

Status validate(const Topology& t) {
  const Fabric& f = t.fabric;
  const int nn = f.numNodes();
  const int nh = static_cast<int>(t.hosts.size());
  if (f.numSwitches < 0 || f.numSwitches > nn) {
    return invalidArgument("topology: numSwitches ", f.numSwitches, " outside [0, ", nn, "]");
  }
  for (int i = 0; i < nn; ++i) {
    const FabricNode& n = f.nodes[i];
    bool sw = n.kind == NodeKind::kSwitch;
    if (sw != (i < f.numSwitches)) {
      return invalidArgument("topology: node ", i, " (", n.desc, ") is a ", nodeKindName(n.kind),
                             " but switches must occupy ids [0, ", f.numSwitches, ")");
    }
    if (n.host < -1 || n.host >= nh) {
      return invalidArgument("topology: node ", i, " host ", n.host, " outside [-1, ", nh, ")");
    }
  }
  for (size_t i = 0; i < f.links.size(); ++i) {
    const Link& l = f.links[i];
    if (l.a < 0 || l.a >= nn || l.b < 0 || l.b >= nn) {
      return invalidArgument("topology: link ", i, " joins ", l.a, " and ", l.b,
                             " but node ids are [0, ", nn, ")");
    }
    if (l.gbps < 0) return invalidArgument("topology: link ", i, " has negative bandwidth");
  }
  for (int h = 0; h < nh; ++h) {
    const Host& host = t.hosts[h];
    for (int id : host.fabricNodes) {
      if (id < 0 || id >= nn) {
        return invalidArgument("topology: host ", h, " (", host.name, ") fabric node ", id,
                               " outside [0, ", nn, ")");
      }
    }
    for (const Nic& nic : host.nics) {
      if (nic.fabricNode < -1 || nic.fabricNode >= nn) {
        return invalidArgument("topology: host ", h, " NIC ", nic.name, " fabric node ",
                               nic.fabricNode, " outside [-1, ", nn, ")");
      }
    }
    int ng = static_cast<int>(host.gpus.size()), nnic = static_cast<int>(host.nics.size());
    for (const DevicePath& p : host.gpuNic) {
      if (p.a < 0 || p.a >= ng || p.b < 0 || p.b >= nnic) {
        return invalidArgument("topology: host ", h, " GPU-NIC path ", p.a, "-", p.b,
                               " names a missing device");
      }
    }
    for (const DevicePath& p : host.gpuGpu) {
      if (p.a < 0 || p.a >= ng || p.b < 0 || p.b >= ng) {
        return invalidArgument("topology: host ", h, " GPU-GPU path ", p.a, "-", p.b,
                               " names a missing device");
      }
    }
  }
  return Status();
}

// ---------------------------------------------------------------- equality (every field)

namespace {
bool eq(const NumaNode& x, const NumaNode& y) {
  return x.osIndex == y.osIndex && x.package == y.package && x.memoryBytes == y.memoryBytes &&
         x.cpus == y.cpus && x.cores == y.cores;
}
bool eq(const PciDevice& x, const PciDevice& y) {
  return x.busId == y.busId && x.vendorId == y.vendorId && x.deviceId == y.deviceId &&
         x.classId == y.classId && x.linkGBps == y.linkGBps && x.numa == y.numa &&
         x.package == y.package && x.pciPath == y.pciPath;
}
bool eq(const Gpu& x, const Gpu& y) {
  return x.index == y.index && x.name == y.name && eq(x.pci, y.pci) && x.cudaDevice == y.cudaDevice;
}
bool eq(const Nic& x, const Nic& y) {
  return x.index == y.index && x.name == y.name && x.netdevs == y.netdevs &&
         x.nodeGuid == y.nodeGuid && x.portGBps == y.portGBps && eq(x.pci, y.pci) &&
         x.fabricNode == y.fabricNode && x.rail == y.rail;
}
bool eq(const DevicePath& x, const DevicePath& y) {
  return x.a == y.a && x.b == y.b && x.cls == y.cls && x.gbps == y.gbps && x.nvlinks == y.nvlinks;
}
bool eq(const Host& x, const Host& y);
bool eq(const FabricNode& x, const FabricNode& y) {
  return x.kind == y.kind && x.guid == y.guid && x.desc == y.desc && x.nports == y.nports &&
         x.lid == y.lid && x.role == y.role && x.level == y.level && x.group == y.group &&
         x.rail == y.rail && x.host == y.host && x.links == y.links;
}
bool eq(const Link& x, const Link& y) {
  return x.a == y.a && x.b == y.b && x.portA == y.portA && x.portB == y.portB &&
         x.width == y.width && x.speed == y.speed && x.gbps == y.gbps && x.level == y.level &&
         x.global == y.global && x.up == y.up;
}
bool eq(const LevelInfo& x, const LevelInfo& y) {
  return x.level == y.level && x.switches == y.switches && x.downLinks == y.downLinks &&
         x.upLinks == y.upLinks && x.downGBps == y.downGBps && x.upGBps == y.upGBps &&
         x.oversubscription == y.oversubscription;
}
bool eq(const Group& x, const Group& y) {
  return x.leaves == y.leaves && x.spines == y.spines && x.hosts == y.hosts &&
         x.globalLinks == y.globalLinks && x.globalGBps == y.globalGBps && x.hostGBps == y.hostGBps;
}
bool eq(const GroupPair& x, const GroupPair& y) {
  return x.a == y.a && x.b == y.b && x.links == y.links && x.gbps == y.gbps;
}
template <typename T>
bool eqVec(const std::vector<T>& x, const std::vector<T>& y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!eq(x[i], y[i])) return false;
  }
  return true;
}
bool eq(const Host& x, const Host& y) {
  return x.name == y.name && x.packages == y.packages && x.cores == y.cores && x.pus == y.pus &&
         eqVec(x.numa, y.numa) && eqVec(x.gpus, y.gpus) && eqVec(x.nics, y.nics) &&
         x.pciSwitches == y.pciSwitches && x.nvswitches == y.nvswitches &&
         eqVec(x.gpuNic, y.gpuNic) && eqVec(x.gpuGpu, y.gpuGpu) && x.fabricNodes == y.fabricNodes;
}
bool eq(const Classification& x, const Classification& y) {
  return x.type == y.type && x.levels == y.levels && eqVec(x.perLevel, y.perLevel) &&
         x.rails == y.rails && eqVec(x.groups, y.groups) && eqVec(x.groupPairs, y.groupPairs) &&
         x.leavesPerGroup == y.leavesPerGroup && x.spinesPerGroup == y.spinesPerGroup &&
         x.hostsPerLeaf == y.hostsPerLeaf && x.globalLinksPerSpine == y.globalLinksPerSpine &&
         x.taper == y.taper && x.tapered == y.tapered && x.hosts == y.hosts &&
         x.switches == y.switches && x.linksDown == y.linksDown && x.oddities == y.oddities;
}
}  // namespace

bool operator==(const Topology& x, const Topology& y) {
  return eqVec(x.hosts, y.hosts) && eqVec(x.fabric.nodes, y.fabric.nodes) &&
         eqVec(x.fabric.links, y.fabric.links) && x.fabric.numSwitches == y.fabric.numSwitches &&
         x.fabric.source == y.fabric.source && eq(x.cls, y.cls);
}

}  // namespace loom::topo
