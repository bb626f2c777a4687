// Topology: plain data describing the machine(s) and the fabric that loom plans for.
//
// Everything here is a value type: vectors of structs indexed by dense integer ids, no pointers.
// The planner (src/plan), the simulator (src/sim) and the CLI read it; discovery (hwloc,
// ibnetdiscover), the generators (src/topo/synth) and JSON (topology_json.cc) fill it.
//
// Ids and invariants (checked by validate(), kept by every producer):
//  - Host id        = index into Topology::hosts.
//  - Fabric node id = index into Fabric::nodes. Switches come first: ids [0, numSwitches) are
//    switches, [numSwitches, nodes.size()) are CAs (HCA ports' owners) and routers.
//  - Link id        = index into Fabric::links. A link joins (a, portA) and (b, portB) and is
//    full duplex: `gbps` is the data rate of ONE direction in GB/s (gigabytes per second).
//  - FabricNode::links lists the node's link ids ordered by local port: the adjacency list.
//    It is derived from Fabric::links (not serialised); call Fabric::rebuildAdjacency() after
//    editing links by hand.
//  - Levels: a CA is level 0, a leaf switch level 1, a spine 2, a core 3. A link's `level` is the
//    lower level of its two ends (0 = host link, 1 = leaf-spine, 2 = spine-core). In a Dragonfly+
//    links are level 0 (host), 1 (leaf-spine inside a group) and 2 (spine-spine between groups,
//    `global` = true).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace loom::topo {

// ---------------------------------------------------------------- node (one host), from hwloc

// Path class between two devices of one host, in the spirit of NCCL's path levels (lower is
// better). Values equal NCCL's so numbers can be compared with its logs.
enum class PathClass : int {
  kLoc = 0,   // same device
  kNvl = 1,   // direct NVLink
  kNvb = 2,   // NVLink through an NVSwitch
  kPix = 4,   // one PCIe switch between them
  kPxb = 5,   // several PCIe switches, no host bridge
  kPhb = 8,   // through a PCIe host bridge (same CPU package)
  kSys = 9,   // across CPU packages (SMP interconnect)
  kNet = 10,  // different hosts, through the network
};
const char* pathClassName(PathClass c);  // "LOC", "NVL", ... "NET"
bool parsePathClass(const std::string& name, PathClass* out);

struct NumaNode {
  int osIndex = -1;
  int package = -1;  // CPU package (socket) index
  int64_t memoryBytes = 0;
  std::vector<int> cpus;  // OS indices of the PUs (hardware threads) of this NUMA node
  int cores = 0;          // physical cores in this NUMA node
};

struct PciDevice {    // A GPU or a NIC as seen on the PCI tree
  std::string busId;  // "0000:3b:00.0"
  uint16_t vendorId = 0;
  uint16_t deviceId = 0;
  uint32_t classId = 0;  // PCI class (0x0302 3D controller, 0x0207 InfiniBand, ...)
  double linkGBps = 0;   // PCIe link bandwidth reported by hwloc, GB/s (0: unknown)
  int numa = -1;         // local NUMA node os index (-1: unknown)
  int package = -1;      // local CPU package (-1: unknown)
  // Bus ids of the PCI bridges from the host bridge down to the device ("" for the host bridge
  // itself is not listed). Two devices below the same switch share a prefix of this list.
  std::vector<std::string> pciPath;
};

struct Gpu {
  int index = 0;     // order among this host's GPUs (CUDA device order when known)
  std::string name;  // model or hwloc name
  PciDevice pci;
  int cudaDevice = -1;  // matched CUDA device index (-1: CUDA absent / unmatched)
};

struct Nic {
  int index = 0;
  std::string name;                  // OpenFabrics device, e.g. "mlx5_0" (or netdev when no RDMA)
  std::vector<std::string> netdevs;  // network interfaces on the same PCI function, e.g. "ib0"
  uint64_t nodeGuid = 0;             // IB node GUID (0: unknown)
  double portGBps = 0;               // port data rate, GB/s (0: unknown)
  PciDevice pci;
  int fabricNode = -1;  // Fabric::nodes id of this NIC's CA (-1: not in the fabric)
  int rail = -1;        // rail (leaf plane) the NIC lands on (-1: none / unknown)
};

// One GPU-NIC or GPU-GPU pair and how it is connected.
struct DevicePath {
  int a = 0;  // GPU index
  int b = 0;  // NIC index (gpuNic) or GPU index (gpuGpu)
  PathClass cls = PathClass::kSys;
  double gbps = 0;  // achievable bandwidth of the path, GB/s
  int nvlinks = 0;  // NVLink count (direct or via NVSwitch), 0 for PCIe paths
};

struct Host {
  std::string name;  // hostname (matches the fabric node description prefix)
  int packages = 0;
  int cores = 0;
  int pus = 0;
  std::vector<NumaNode> numa;
  std::vector<Gpu> gpus;
  std::vector<Nic> nics;
  int pciSwitches = 0;             // PCI-to-PCI bridges with a PCI upstream (switch ports)
  int nvswitches = 0;              // NVSwitch PCI devices
  std::vector<DevicePath> gpuNic;  // one entry per (GPU, NIC) pair
  std::vector<DevicePath> gpuGpu;  // one entry per unordered GPU pair, a < b
  std::vector<int> fabricNodes;    // CA node ids of this host in Fabric::nodes
};

// ---------------------------------------------------------------- fabric, from ibnetdiscover

enum class NodeKind : int { kSwitch = 0, kCa = 1, kRouter = 2 };
enum class Role : int { kUnknown = 0, kHost = 1, kLeaf = 2, kSpine = 3, kCore = 4 };
const char* nodeKindName(NodeKind k);  // "switch", "ca", "router"
const char* roleName(Role r);          // "unknown", "host", "leaf", "spine", "core"

struct FabricNode {
  NodeKind kind = NodeKind::kSwitch;
  uint64_t guid = 0;  // node GUID
  std::string desc;   // node description, e.g. "leaf01 Quantum", "node03 mlx5_0"
  int nports = 0;
  int lid = 0;                 // base LID (switch port 0 / CA port 1 when known)
  Role role = Role::kUnknown;  // filled by classify()
  int level = -1;              // 0 CA, 1 leaf, 2 spine, 3 core (-1: unclassified)
  int group = -1;              // Dragonfly+ group (-1: none)
  int rail = -1;               // rail plane of a leaf / CA (-1: none)
  int host = -1;               // CA: Topology::hosts id (-1: unmapped)
  // Derived, not serialised: link ids of this node ordered by local port (adjacency list).
  std::vector<int> links;
};

struct Link {
  int a = 0, b = 0;           // node ids; a < b is NOT required, a is the end listed first
  int portA = 0, portB = 0;   // port numbers at a and b
  int width = 4;              // lanes: 1, 2, 4, 8 or 12
  std::string speed = "HDR";  // SDR DDR QDR FDR10 FDR EDR HDR NDR XDR
  double gbps = 0;            // data rate of one direction in GB/s (width x lane rate / 8)
  int level = -1;             // see file comment (-1: unclassified)
  bool global = false;        // Dragonfly+ inter-group link
  bool up = true;             // false: link known to be down (cable pulled)
  int peer(int node) const { return node == a ? b : a; }
};

struct Fabric {
  std::vector<FabricNode> nodes;  // switches first, then CAs / routers
  std::vector<Link> links;
  int numSwitches = 0;
  std::string source;  // where it came from ("ibnetdiscover:<file>", "synth:...")

  int numNodes() const { return static_cast<int>(nodes.size()); }
  bool isSwitch(int id) const { return id >= 0 && id < numSwitches; }
  // Fills FabricNode::links from links (ordered by local port).
  void rebuildAdjacency();
};

// Data rate of one lane of an InfiniBand speed token, Gb/s (bits); 0 for an unknown token.
double laneGbps(const std::string& speed);
// GB/s (bytes) of a width x speed link, e.g. (4, "HDR") -> 25.
double linkGBps(int width, const std::string& speed);

// ---------------------------------------------------------------- classification

enum class FabricType : int { kNone = 0, kFatTree = 1, kDragonflyPlus = 2, kGeneric = 3 };
const char* fabricTypeName(FabricType t);  // "none", "fat-tree", "dragonfly+", "generic"
bool parseFabricType(const std::string& name, FabricType* out);

// One switch level of a fat-tree (level 1 = leaves). Link counts are totals over the level.
struct LevelInfo {
  int level = 0;
  int switches = 0;
  int downLinks = 0;    // links to level-1 (hosts for leaves)
  int upLinks = 0;      // links to level+1 (0 at the top)
  double downGBps = 0;  // summed bandwidth of down links
  double upGBps = 0;
  double oversubscription = 0;  // downGBps / upGBps (0 at the top level)
};

struct Group {              // Dragonfly+ group: a two-level leaf/spine network
  std::vector<int> leaves;  // switch node ids
  std::vector<int> spines;
  int hosts = 0;        // CAs attached to the group's leaves
  int globalLinks = 0;  // links leaving the group
  double globalGBps = 0;
  double hostGBps = 0;  // summed host injection bandwidth
};

struct GroupPair {  // global links between two groups (a < b); absent if none
  int a = 0, b = 0;
  int links = 0;
  double gbps = 0;
};

struct Classification {
  FabricType type = FabricType::kNone;
  // fat-tree
  int levels = 0;                   // switch levels (2 or 3 for leaf/spine(/core))
  std::vector<LevelInfo> perLevel;  // perLevel[i].level == i + 1
  int rails = 0;                    // separate leaf planes the hosts' NICs land on (0/1: none)
  // dragonfly+
  std::vector<Group> groups;
  std::vector<GroupPair> groupPairs;
  int leavesPerGroup = 0;  // when uniform, else 0
  int spinesPerGroup = 0;
  int hostsPerLeaf = 0;
  int globalLinksPerSpine = 0;
  double taper = 0;  // group global GB/s / group host GB/s (< 1: tapered)
  bool tapered = false;
  // all types
  int hosts = 0;  // CAs attached to switches
  int switches = 0;
  int linksDown = 0;
  std::vector<std::string> oddities;  // human-readable findings: missing links, asymmetries
};

// ---------------------------------------------------------------- the whole thing

struct Topology {
  std::vector<Host> hosts;
  Fabric fabric;
  Classification cls;
};

// Checks ids and invariants listed at the top of this file; names the first broken one.
Status validate(const Topology& t);

// JSON (schema in README "Topology JSON"). Round trips are exact: fromJson(toJson(t)) == t.
std::string toJson(const Topology& t, int indent = 1);
// `source` names the input in error messages ("file.json").
Status fromJson(const std::string& text, Topology* out, const std::string& source = "<json>");
Status loadTopologyFile(const std::string& path, Topology* out);
Status writeTopologyFile(const std::string& path, const Topology& t);

bool operator==(const Topology& x, const Topology& y);
inline bool operator!=(const Topology& x, const Topology& y) { return !(x == y); }

}  // namespace loom::topo
