// Fat-tree generator. Switch order: leaves (pod, rail, leaf), spines (pod, spine), cores; then
// the hosts' CAs. Leaf ports: hosts first, then up links; spine ports: down links first, then up
// links; core port p+1 goes to pod p.
#include <cstdio>

#include "topo/classify.h"
#include "topo/fabric_builder.h"
#include "topo/synth/synth.h"
#include "topo/synth/synth_common.h"

namespace loom::topo::synth {

namespace {
Status checkFatTree(const FatTreeParams& p) {
  if (p.levels != 2 && p.levels != 3) {
    return invalidArgument("fat-tree: levels must be 2 or 3, got ", p.levels);
  }
  if (p.pods < 1 || p.leavesPerPod < 1 || p.spinesPerPod < 1 || p.hostsPerLeaf < 1 || p.rails < 1 ||
      p.linksPerLeafSpine < 1) {
    return invalidArgument("fat-tree: pods, leavesPerPod, spinesPerPod, hostsPerLeaf, rails and ",
                           "linksPerLeafSpine must be >= 1");
  }
  if (p.levels == 2 && (p.pods != 1 || p.cores != 0)) {
    return invalidArgument("fat-tree: 2 levels take pods=1 and cores=0 (got pods=", p.pods,
                           " cores=", p.cores, ")");
  }
  if (p.levels == 3 && (p.cores < p.spinesPerPod || p.cores % p.spinesPerPod != 0)) {
    return invalidArgument("fat-tree: cores (", p.cores, ") must be a positive multiple of ",
                           "spinesPerPod (", p.spinesPerPod, ")");
  }
  if (linkGBps(p.width, p.speed) <= 0) {
    return invalidArgument("fat-tree: unknown link width/speed ", p.width, "x", p.speed);
  }
  int leafPorts = p.hostsPerLeaf + p.spinesPerPod * p.linksPerLeafSpine;
  int spinePorts = p.leavesPerPod * p.rails * p.linksPerLeafSpine + p.cores / p.spinesPerPod;
  if (leafPorts > kMaxSwitchPorts || spinePorts > kMaxSwitchPorts || p.pods > kMaxSwitchPorts) {
    return invalidArgument("fat-tree: a switch would need more than ", kMaxSwitchPorts, " ports");
  }
  return Status();
}
}  // namespace

Status generateFatTree(const FatTreeParams& p, Topology* out) {
  LOOM_CHECK(checkFatTree(p));
  const int leavesPerPodAllRails = p.leavesPerPod * p.rails;
  const int hosts = p.pods * p.leavesPerPod * p.hostsPerLeaf;
  const int planes = p.levels == 3 ? p.cores / p.spinesPerPod : 0;  // cores per plane
  FabricBuilder b;
  b.reserve(p.pods * (leavesPerPodAllRails + p.spinesPerPod) + p.cores + hosts * p.rails,
            hosts * p.rails * 2 + p.pods * leavesPerPodAllRails * p.spinesPerPod);
  IdAlloc ids;
  char name[96];
  std::vector<int> leaf(p.pods * leavesPerPodAllRails), spine(p.pods * p.spinesPerPod);
  const int leafPorts = p.hostsPerLeaf + p.spinesPerPod * p.linksPerLeafSpine;
  const int spineDown = leavesPerPodAllRails * p.linksPerLeafSpine;
  for (int pod = 0; pod < p.pods; ++pod) {
    for (int r = 0; r < p.rails; ++r) {
      for (int l = 0; l < p.leavesPerPod; ++l) {
        std::snprintf(name, sizeof(name), "ft-leaf-p%d-r%d-%d", pod, r, l);
        leaf[pod * leavesPerPodAllRails + r * p.leavesPerPod + l] =
            ids.addSwitch(&b, name, leafPorts);
      }
    }
  }
  for (int pod = 0; pod < p.pods; ++pod) {
    for (int s = 0; s < p.spinesPerPod; ++s) {
      std::snprintf(name, sizeof(name), "ft-spine-p%d-%d", pod, s);
      spine[pod * p.spinesPerPod + s] = ids.addSwitch(&b, name, spineDown + planes);
    }
  }
  std::vector<int> core(p.cores);
  for (int c = 0; c < p.cores; ++c) {
    std::snprintf(name, sizeof(name), "ft-core-%d", c);
    core[c] = ids.addSwitch(&b, name, p.pods);
  }
  // Hosts: host h sits in pod h / (leavesPerPod*hostsPerLeaf), on leaf-in-pod (h / hpl) % lpp.
  for (int h = 0; h < hosts; ++h) {
    int pod = h / (p.leavesPerPod * p.hostsPerLeaf);
    int l = (h / p.hostsPerLeaf) % p.leavesPerPod;
    int port = h % p.hostsPerLeaf + 1;
    for (int r = 0; r < p.rails; ++r) {
      int ca = ids.addCa(&b, h, r);
      b.addLink(leaf[pod * leavesPerPodAllRails + r * p.leavesPerPod + l], port, ca, 1, p.width,
                p.speed);
    }
  }
  for (int pod = 0; pod < p.pods; ++pod) {
    for (int li = 0; li < leavesPerPodAllRails; ++li) {
      for (int s = 0; s < p.spinesPerPod; ++s) {
        for (int k = 0; k < p.linksPerLeafSpine; ++k) {
          b.addLink(leaf[pod * leavesPerPodAllRails + li],
                    p.hostsPerLeaf + 1 + s * p.linksPerLeafSpine + k,
                    spine[pod * p.spinesPerPod + s], 1 + li * p.linksPerLeafSpine + k, p.width,
                    p.speed);
        }
      }
    }
  }
  for (int pod = 0; pod < p.pods && p.levels == 3; ++pod) {
    for (int s = 0; s < p.spinesPerPod; ++s) {
      for (int c = 0; c < planes; ++c) {
        b.addLink(spine[pod * p.spinesPerPod + s], spineDown + 1 + c, core[s * planes + c], pod + 1,
                  p.width, p.speed);
      }
    }
  }
  char src[160];
  std::snprintf(src, sizeof(src),
                "synth:fat-tree:levels=%d,pods=%d,leavesPerPod=%d,spinesPerPod=%d,cores=%d,"
                "hostsPerLeaf=%d,rails=%d",
                p.levels, p.pods, p.leavesPerPod, p.spinesPerPod, p.cores, p.hostsPerLeaf, p.rails);
  Topology t;
  t.fabric = b.finish(src);
  attachHosts(&t, nullptr);
  *out = std::move(t);
  return Status();
}

}  // namespace loom::topo::synth
