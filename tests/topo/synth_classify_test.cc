// Generators + classification: what was generated is what classify() finds, also after a trip
// through ibnetdiscover text; a removed cable shows up as an oddity.
#include <gtest/gtest.h>

#include <algorithm>

#include "topo/classify.h"
#include "topo/ibnet.h"
#include "topo/synth/synth.h"

namespace loom::topo {
namespace {

Topology reparse(const Topology& t) {
  Topology u;
  EXPECT_TRUE(parseIbnetdiscover(writeIbnetdiscover(t.fabric), "gen", &u.fabric).ok());
  classify(&u);
  return u;
}

bool anyOddityContains(const Classification& c, const std::string& s) {
  return std::any_of(c.oddities.begin(), c.oddities.end(),
                     [&](const std::string& o) { return o.find(s) != std::string::npos; });
}

TEST(Synth, TwoLevelFatTreeOversubscribed) {
  synth::FatTreeParams p;
  p.leavesPerPod = 4;
  p.spinesPerPod = 4;
  p.hostsPerLeaf = 8;  // 8 down, 4 up: 2:1
  Topology t;
  ASSERT_TRUE(synth::generateFatTree(p, &t).ok());
  for (const Topology& x : {t, reparse(t)}) {
    Topology u = x;
    classify(&u);
    const Classification& c = u.cls;
    EXPECT_EQ(c.type, FabricType::kFatTree);
    EXPECT_EQ(c.levels, 2);
    ASSERT_EQ(c.perLevel.size(), 2u);
    EXPECT_EQ(c.perLevel[0].switches, 4);
    EXPECT_EQ(c.perLevel[1].switches, 4);
    EXPECT_DOUBLE_EQ(c.perLevel[0].oversubscription, 2.0);
    EXPECT_EQ(c.perLevel[1].upLinks, 0);
    EXPECT_EQ(c.hosts, 32);
    EXPECT_EQ(u.hosts.size(), 32u);
    EXPECT_EQ(c.rails, 0);
    EXPECT_TRUE(c.oddities.empty()) << c.oddities.front();
    EXPECT_DOUBLE_EQ(u.fabric.links[0].gbps, 25.0);  // 4x HDR
  }
}

TEST(Synth, ThreeLevelFatTree) {
  synth::FatTreeParams p;
  p.levels = 3;
  p.pods = 4;
  p.leavesPerPod = 2;
  p.spinesPerPod = 2;
  p.cores = 2;  // one core per plane: spine has 2 down, 1 up
  p.hostsPerLeaf = 2;
  Topology t;
  ASSERT_TRUE(synth::generateFatTree(p, &t).ok());
  Topology u = reparse(t);
  const Classification& c = u.cls;
  ASSERT_EQ(c.type, FabricType::kFatTree);
  EXPECT_EQ(c.levels, 3);
  ASSERT_EQ(c.perLevel.size(), 3u);
  EXPECT_EQ(c.perLevel[0].switches, 8);
  EXPECT_EQ(c.perLevel[1].switches, 8);
  EXPECT_EQ(c.perLevel[2].switches, 2);
  EXPECT_DOUBLE_EQ(c.perLevel[0].oversubscription, 1.0);
  EXPECT_DOUBLE_EQ(c.perLevel[1].oversubscription, 2.0);
  EXPECT_EQ(c.perLevel[2].downLinks, 8);
  EXPECT_EQ(c.hosts, 16);
  for (int s = 0; s < u.fabric.numSwitches; ++s) {
    const FabricNode& n = u.fabric.nodes[s];
    Role want = n.desc.find("leaf") != std::string::npos    ? Role::kLeaf
                : n.desc.find("spine") != std::string::npos ? Role::kSpine
                                                            : Role::kCore;
    EXPECT_EQ(n.role, want) << n.desc;
  }
}

TEST(Synth, RailOptimisedFatTree) {
  synth::FatTreeParams p;
  p.leavesPerPod = 2;
  p.spinesPerPod = 2;
  p.hostsPerLeaf = 4;
  p.rails = 4;
  Topology t;
  ASSERT_TRUE(synth::generateFatTree(p, &t).ok());
  Topology u = reparse(t);
  EXPECT_EQ(u.cls.type, FabricType::kFatTree);
  EXPECT_EQ(u.cls.rails, 4);
  EXPECT_EQ(u.cls.hosts, 8);
  ASSERT_EQ(u.hosts.size(), 8u);
  for (const Host& h : u.hosts) {
    ASSERT_EQ(h.nics.size(), 4u);
    for (const Nic& n : h.nics) EXPECT_EQ(n.name, "mlx5_" + std::to_string(n.rail));
  }
}

TEST(Synth, DragonflyPlus) {
  synth::DragonflyParams p;
  p.groups = 5;
  p.leavesPerGroup = 3;
  p.spinesPerGroup = 2;
  p.hostsPerLeaf = 4;
  p.globalLinksPerSpine = 4;  // 8 per group, 4 peers: 2 links per group pair
  Topology t;
  ASSERT_TRUE(synth::generateDragonfly(p, &t).ok());
  Topology u = reparse(t);
  const Classification& c = u.cls;
  ASSERT_EQ(c.type, FabricType::kDragonflyPlus) << summary(u);
  EXPECT_EQ(c.groups.size(), 5u);
  EXPECT_EQ(c.leavesPerGroup, 3);
  EXPECT_EQ(c.spinesPerGroup, 2);
  EXPECT_EQ(c.hostsPerLeaf, 4);
  EXPECT_EQ(c.globalLinksPerSpine, 4);
  ASSERT_EQ(c.groupPairs.size(), 10u);
  for (const GroupPair& gp : c.groupPairs) EXPECT_EQ(gp.links, 2);
  for (const Group& g : c.groups) EXPECT_EQ(g.hosts, 12);
  EXPECT_DOUBLE_EQ(c.taper, 8.0 / 12.0);
  EXPECT_TRUE(c.tapered);
  EXPECT_TRUE(c.oddities.empty()) << c.oddities.front();
  int global = 0;
  for (const Link& l : u.fabric.links) global += l.global ? 1 : 0;
  EXPECT_EQ(global, 20);
}

// Rails like the fat-tree generator's: R NICs per host on R leaf planes of every group, the same
// injection bandwidth as a rail-optimised fat-tree of the same hosts; parts counted.
TEST(Synth, DragonflyPlusWithRails) {
  synth::DragonflyParams p;
  p.groups = 4;
  p.leavesPerGroup = 2;
  p.spinesPerGroup = 4;
  p.hostsPerLeaf = 4;
  p.globalLinksPerSpine = 3;
  p.rails = 4;
  Topology t;
  ASSERT_TRUE(synth::generateDragonfly(p, &t).ok());
  Topology u = reparse(t);
  const Classification& c = u.cls;
  ASSERT_EQ(c.type, FabricType::kDragonflyPlus) << summary(u);
  EXPECT_EQ(c.groups.size(), 4u);
  EXPECT_EQ(c.rails, 4);
  EXPECT_EQ(c.hosts, 32);
  ASSERT_EQ(u.hosts.size(), 32u);
  for (const Host& h : u.hosts) {
    ASSERT_EQ(h.nics.size(), 4u) << h.name;
    for (const Nic& n : h.nics) EXPECT_EQ(n.rail, std::stoi(n.name.substr(5))) << h.name;
  }
  // Per group: 8 leaves x 4 hosts x 4 NICs = 128 NIC links in; global 4 spines x 3 = 12 x 25 GB/s.
  EXPECT_DOUBLE_EQ(c.taper, 12.0 / 32.0);
  FabricCounts n = countFabric(u);
  EXPECT_EQ(n.switches, 4 * (8 + 4));
  EXPECT_EQ(n.hostCables, 128);
  EXPECT_EQ(n.switchCables, 4 * 8 * 4 + 4 * 4 * 3 / 2);
  EXPECT_EQ(n.globalCables, 24);
  EXPECT_EQ(n.switchPorts, 128 + 2 * n.switchCables);
  EXPECT_NE(summary(u).find("parts: 48 switches"), std::string::npos) << summary(u);
  // One rail is the old generator, bit for bit.
  p.rails = 1;
  Topology one;
  ASSERT_TRUE(synth::generateDragonfly(p, &one).ok());
  EXPECT_EQ(one.fabric.links.size(), 32u + 4 * 2 * 4 + 24);  // host, leaf-spine, global
}

TEST(Synth, FatTreeCounts) {
  synth::FatTreeParams p;
  p.leavesPerPod = 2;
  p.spinesPerPod = 8;
  p.hostsPerLeaf = 8;
  p.rails = 8;
  Topology t;
  ASSERT_TRUE(synth::generateFatTree(p, &t).ok());
  classify(&t);
  FabricCounts n = countFabric(t);
  EXPECT_EQ(n.switches, 24);
  EXPECT_EQ(n.switchesPerLevel[0], 16);
  EXPECT_EQ(n.switchesPerLevel[1], 8);
  EXPECT_EQ(n.hostCables, 128);
  EXPECT_EQ(n.switchCables, 128);
  EXPECT_EQ(n.globalCables, 0);
}

TEST(Synth, MissingLinkIsReported) {
  synth::FatTreeParams p;
  Topology t;
  ASSERT_TRUE(synth::generateFatTree(p, &t).ok());
  Topology cut = t;
  // Remove the first leaf-spine link.
  auto it = std::find_if(cut.fabric.links.begin(), cut.fabric.links.end(), [&](const Link& l) {
    return cut.fabric.isSwitch(l.a) && cut.fabric.isSwitch(l.b);
  });
  ASSERT_NE(it, cut.fabric.links.end());
  std::string leafDesc = cut.fabric.nodes[it->a].desc;
  cut.fabric.links.erase(it);
  cut.fabric.rebuildAdjacency();
  Topology u = reparse(cut);
  EXPECT_EQ(u.cls.type, FabricType::kFatTree);
  EXPECT_TRUE(anyOddityContains(u.cls, leafDesc)) << summary(u);
  EXPECT_EQ(missingLinks(t.fabric, u.fabric).size(), 1u);
}

TEST(Synth, GenericWhenLeavesAreLinked) {
  synth::FatTreeParams p;
  Topology t;
  ASSERT_TRUE(synth::generateFatTree(p, &t).ok());
  Link l = t.fabric.links[0];
  l.a = 0;
  l.b = 1;  // leaf 0 - leaf 1 on spare ports
  l.portA = l.portB = 40;
  t.fabric.links.push_back(l);
  t.fabric.rebuildAdjacency();
  classify(&t);
  EXPECT_EQ(t.cls.type, FabricType::kGeneric);
  EXPECT_FALSE(t.cls.oddities.empty());
}

TEST(Synth, SpecStrings_DragonflyRails) {
  Topology t;
  ASSERT_TRUE(synth::generateFromSpec("dragonfly:groups=3,hostsPerLeaf=2,rails=2", &t).ok());
  classify(&t);
  EXPECT_EQ(t.cls.rails, 2);
  EXPECT_FALSE(synth::generateFromSpec("dragonfly:rails=0", &t).ok());
}

TEST(Synth, SpecStrings) {
  Topology t;
  EXPECT_TRUE(synth::generateFromSpec("dragonfly:groups=4,hostsPerLeaf=3", &t).ok());
  EXPECT_TRUE(synth::generateFromSpec("fat-tree:levels=3,pods=2,cores=8", &t).ok());
  Status s = synth::generateFromSpec("fat-tree:levels=4", &t);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("levels"), std::string::npos);
  s = synth::generateFromSpec("fat-tree:bogus=1", &t);
  EXPECT_NE(s.message().find("bogus"), std::string::npos);
}

}  // namespace
}  // namespace loom::topo
