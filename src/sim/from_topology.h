// Builds the simulator's link graph from a topo::Topology: its switches and switch links as they
// are (levels and Dragonfly+ groups from the classification), and per host params.gpusPerNode
// GPUs with NVLink/PCIe links and the host's NICs cabled to the leaves the fabric says, at the
// fabric's link rates. A host without fabric NICs is an error (the fabric has no way to it).
#pragma once

#include "core/status.h"
#include "sim/net.h"
#include "topo/topology.h"

namespace loom::sim {

// `out` must be empty (constructed with the wanted NodeParams).
Status netFromTopology(const topo::Topology& t, Net* out);

// Ids of the Net's switch nodes by topology node id (-1 for CAs), for what-if on topology ids.
struct TopoMap {
  std::vector<int> netNode;  // topology fabric node -> Net node
  std::vector<int> netLink;  // topology link -> Net link (a->b direction; b->a is +1), -1 if none
};
Status netFromTopology(const topo::Topology& t, Net* out, TopoMap* map);

}  // namespace loom::sim
