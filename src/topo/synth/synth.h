// Fabric generators: parametrised fat-trees and Dragonfly+ networks as a Topology (fabric plus
// one Host per generated host name). Write them with writeIbnetdiscover() (topo/ibnet.h): the
// same text is an ibsim net file (<= 256 switches) and an ibnetdiscover dump (any size).
//
// Names: hosts "node00001".."nodeNNNNN", NIC r of a host "mlx5_<r>" (CA description
// "node00001 mlx5_0", the convention loom maps hosts by). Switch descriptions name their place
// ("ft-leaf-p0-r0-3", "df-g2-spine1") but classification never reads them.
#pragma once

#include <string>

#include "core/status.h"
#include "topo/topology.h"

namespace loom::topo::synth {

struct FatTreeParams {
  int levels = 2;        // 2 (leaf/spine) or 3 (leaf/spine/core, spines grouped in pods)
  int pods = 1;          // 3 levels: pods; 2 levels: must be 1
  int leavesPerPod = 4;  // leaves per pod and per rail
  int spinesPerPod = 4;  // 2 levels: all spines; 3 levels: spines of one pod
  int cores = 0;         // 3 levels: core switches, a multiple of spinesPerPod; core plane
                         // s (cores/spinesPerPod of them) joins spine s of every pod
  int hostsPerLeaf = 8;
  int rails = 1;              // NICs per host; NIC r of every host lands on the rail-r leaves
  int linksPerLeafSpine = 1;  // parallel cables between each leaf and each spine of its pod
  int width = 4;
  std::string speed = "HDR";
  // Leaf oversubscription = hostsPerLeaf / (spinesPerPod * linksPerLeafSpine);
  // spine (3 levels) = leavesPerPod * rails * linksPerLeafSpine / (cores / spinesPerPod).
};

struct DragonflyParams {
  int groups = 4;
  int leavesPerGroup = 2;  // per rail
  int spinesPerGroup = 2;
  int hostsPerLeaf = 2;
  int globalLinksPerSpine = 2;  // spine ports to other groups, spread evenly over group pairs
  int linksPerLeafSpine = 1;
  int rails = 1;  // NICs per host; NIC r of every host lands on the rail-r leaves of its group
  int width = 4;
  std::string speed = "HDR";
  std::string globalSpeed;  // speed of global links (empty: same as `speed`)
};

Status generateFatTree(const FatTreeParams& p, Topology* out);
Status generateDragonfly(const DragonflyParams& p, Topology* out);

// "fat-tree:levels=3,pods=4,..." / "dragonfly:groups=8,..." (keys = the field names above).
Status generateFromSpec(const std::string& spec, Topology* out);

}  // namespace loom::topo::synth
