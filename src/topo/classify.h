// Classification of a fabric from its switch graph alone (descriptions are never read), and the
// mapping of CAs to hosts.
//
// Levels come from a breadth-first search starting at the switches that carry hosts (leaves,
// level 1). A graph whose switch links all join adjacent levels is a fat-tree; a graph of at most
// two levels whose only same-level links join spines of different leaf/spine components is a
// Dragonfly+ (the components are its groups); anything else is generic (levels still set).
// Everything is linear in nodes + links (plus groups^2 for the Dragonfly+ pair check).
// Deviations from the dominant pattern (a leaf with fewer up links than its peers, a group pair
// without a global link, unreachable switches) are listed in Classification::oddities; that is
// how a cable that is down shows up.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "topo/topology.h"

namespace loom::topo {

// CA GUID (node or port GUID) -> hostname, for fabrics whose descriptions carry no hostname.
struct HostMap {
  std::unordered_map<uint64_t, std::string> byGuid;
};
// File format, one CA a line: "<guid> <hostname>" or "<guid> \"<hostname>\""; '#' comments.
Status loadHostMap(const std::string& path, HostMap* out);

// Groups the fabric's CAs into Topology::hosts: by `map` when it names the CA's GUID, else by the
// description's first word ("node03 mlx5_0" -> host "node03", NIC "mlx5_0"). Hosts already in
// `t` (from hwloc) are matched by name and keep their data; missing ones are appended.
void attachHosts(Topology* t, const HostMap* map);

// Fills node roles/levels/groups/rails, link levels/global flags and t->cls. Calls attachHosts
// first when a CA has no host yet.
void classify(Topology* t);

// Links of `expected` (matched by node GUID and port) that `found` lacks, as readable lines
// "leaf01 Quantum[9] - spine02 Quantum[1]"; and the count of links found but not expected.
std::vector<std::string> missingLinks(const Fabric& expected, const Fabric& found,
                                      int* unexpected = nullptr);

// Parts of a fabric (up links only): what it costs beside how fast it is.
struct FabricCounts {
  int switches = 0;
  int switchesPerLevel[3] = {0, 0, 0};  // leaf, spine, core (classified fabrics)
  long switchPorts = 0;                 // switch ports with a cable
  long hostCables = 0;                  // switch <-> CA
  long switchCables = 0;                // switch <-> switch
  long globalCables = 0;                // of those, Dragonfly+ global links
};
FabricCounts countFabric(const Topology& t);
// "2816 switches (512 leaf, 256 spine, 2048 core), 81920 switch ports in use, 49152 cables (...)"
std::string countsLine(const FabricCounts& c);

// missingLinks() for any expected fabric: by GUID when every expected node has one, else by node
// name (an ibsim net file: "Switch1" ids, which ibsim makes the node descriptions); refuses
// (loomInvalidArgument) when names are missing or not unique.
struct FabricDiff {
  std::vector<std::string> missing;
  int unexpected = 0;
  bool byName = false;
};
Status compareFabrics(const Fabric& expected, const Fabric& found, FabricDiff* out);

// A short human summary (type, levels or groups, oversubscription, hosts, oddities).
std::string summary(const Topology& t);

}  // namespace loom::topo
