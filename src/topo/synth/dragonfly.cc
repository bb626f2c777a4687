// Dragonfly+ generator. Each group is a two-level leaf/spine network (every leaf joins every
// spine of its group); spines carry the global links. Global ports are dealt to group pairs in
// rounds (pairs ordered by distance d = 1..groups/2, then by group), one link per pair per round
// while both groups have a free port, so links spread evenly over pairs and over spines (group
// g's k-th global link uses spine k % spinesPerGroup). With spinesPerGroup*globalLinksPerSpine a
// multiple of groups-1 every pair gets the same number of links.
// Rails (NICs per host) as in the fat-tree generator: every group has leavesPerGroup leaves per
// rail, NIC r of every host plugs into the rail-r leaf of its position, and every leaf of every
// rail joins every spine of its group, so R rails give a host R times the injection bandwidth.
#include <cstdio>
#include <vector>

#include "topo/classify.h"
#include "topo/synth/synth.h"
#include "topo/synth/synth_common.h"

namespace loom::topo::synth {

namespace {
Status checkDragonfly(const DragonflyParams& p) {
  if (p.groups < 2 || p.leavesPerGroup < 1 || p.spinesPerGroup < 1 || p.hostsPerLeaf < 1 ||
      p.globalLinksPerSpine < 1 || p.linksPerLeafSpine < 1 || p.rails < 1) {
    return invalidArgument("dragonfly+: groups must be >= 2 and leavesPerGroup, spinesPerGroup, ",
                           "hostsPerLeaf, globalLinksPerSpine, linksPerLeafSpine, rails >= 1");
  }
  if (p.spinesPerGroup * p.globalLinksPerSpine < p.groups - 1) {
    return invalidArgument("dragonfly+: ", p.spinesPerGroup * p.globalLinksPerSpine,
                           " global ports per group cannot reach the other ", p.groups - 1,
                           " groups");
  }
  std::string gs = p.globalSpeed.empty() ? p.speed : p.globalSpeed;
  if (linkGBps(p.width, p.speed) <= 0 || linkGBps(p.width, gs) <= 0) {
    return invalidArgument("dragonfly+: unknown link speed ", p.speed, "/", gs);
  }
  if (p.hostsPerLeaf + p.spinesPerGroup * p.linksPerLeafSpine > kMaxSwitchPorts ||
      p.leavesPerGroup * p.rails * p.linksPerLeafSpine + p.globalLinksPerSpine > kMaxSwitchPorts) {
    return invalidArgument("dragonfly+: a switch would need more than ", kMaxSwitchPorts, " ports");
  }
  return Status();
}
}  // namespace

Status generateDragonfly(const DragonflyParams& p, Topology* out) {
  LOOM_CHECK(checkDragonfly(p));
  const int G = p.groups, R = p.rails, L = p.leavesPerGroup * R, S = p.spinesPerGroup;
  const int spineDown = L * p.linksPerLeafSpine;
  const std::string gspeed = p.globalSpeed.empty() ? p.speed : p.globalSpeed;
  FabricBuilder b;
  IdAlloc ids;
  char name[64];
  std::vector<int> leaf(G * L), spine(G * S);
  for (int g = 0; g < G; ++g) {
    for (int l = 0; l < L; ++l) {  // leaf l of group g: rail l / leavesPerGroup
      if (R == 1) {
        std::snprintf(name, sizeof(name), "df-g%d-leaf%d", g, l);
      } else {
        std::snprintf(name, sizeof(name), "df-g%d-r%d-leaf%d", g, l / p.leavesPerGroup,
                      l % p.leavesPerGroup);
      }
      leaf[g * L + l] = ids.addSwitch(&b, name, p.hostsPerLeaf + S * p.linksPerLeafSpine);
    }
    for (int s = 0; s < S; ++s) {
      std::snprintf(name, sizeof(name), "df-g%d-spine%d", g, s);
      spine[g * S + s] = ids.addSwitch(&b, name, spineDown + p.globalLinksPerSpine);
    }
  }
  for (int g = 0; g < G; ++g) {
    for (int l = 0; l < L; ++l) {
      const int rail = l / p.leavesPerGroup, pos = l % p.leavesPerGroup;
      for (int h = 0; h < p.hostsPerLeaf; ++h) {
        int host = (g * p.leavesPerGroup + pos) * p.hostsPerLeaf + h;
        b.addLink(leaf[g * L + l], h + 1, ids.addCa(&b, host, rail), 1, p.width, p.speed);
      }
      for (int s = 0; s < S; ++s) {
        for (int k = 0; k < p.linksPerLeafSpine; ++k) {
          b.addLink(leaf[g * L + l], p.hostsPerLeaf + 1 + s * p.linksPerLeafSpine + k,
                    spine[g * S + s], 1 + l * p.linksPerLeafSpine + k, p.width, p.speed);
        }
      }
    }
  }
  // Deal global ports. used[g] = global links of group g so far; port k -> spine k % S,
  // spine port spineDown + 1 + k / S.
  const int perGroup = S * p.globalLinksPerSpine;
  std::vector<int> used(G, 0);
  bool progress = true;
  while (progress) {
    progress = false;
    for (int d = 1; d <= G / 2; ++d) {
      for (int a = 0; a < G; ++a) {
        int c = (a + d) % G;
        if (2 * d == G && a >= c) continue;  // opposite pairs once
        if (used[a] >= perGroup || used[c] >= perGroup) continue;
        int ka = used[a]++, kc = used[c]++;
        b.addLink(spine[a * S + ka % S], spineDown + 1 + ka / S, spine[c * S + kc % S],
                  spineDown + 1 + kc / S, p.width, gspeed);
        progress = true;
      }
    }
  }
  char src[192];
  std::snprintf(src, sizeof(src),
                "synth:dragonfly+:groups=%d,leavesPerGroup=%d,spinesPerGroup=%d,hostsPerLeaf=%d,"
                "globalLinksPerSpine=%d,rails=%d",
                G, p.leavesPerGroup, S, p.hostsPerLeaf, p.globalLinksPerSpine, R);
  Topology t;
  t.fabric = b.finish(src);
  attachHosts(&t, nullptr);
  *out = std::move(t);
  return Status();
}

}  // namespace loom::topo::synth
