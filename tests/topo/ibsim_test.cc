// Generated fabrics discovered for real: ibsim runs the generated net file, ibnetdiscover (under
// libumad2sim) walks it, and loom's parser + classifier must find what was generated.
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "ibsim_harness.h"
#include "topo/classify.h"
#include "topo/discover.h"
#include "topo/ibnet.h"
#include "topo/synth/synth.h"

namespace loom::topo {
namespace {

using testing::Ibsim;

#define SKIP_WITHOUT_IBSIM()                                       \
  do {                                                             \
    std::string why = Ibsim::unavailableReason();                  \
    if (!why.empty()) GTEST_SKIP() << "cannot run ibsim: " << why; \
  } while (0)

// Runs ibsim on t's fabric, discovers it with `args`, parses and classifies the output.
Topology discover(const Topology& t, const std::string& args, Ibsim* sim, bool start = true) {
  Topology found;
  if (start) {
    std::string err = sim->start(writeIbnetdiscover(t.fabric));
    EXPECT_EQ(err, "");
    if (!err.empty()) return found;
  }
  std::string text;
  std::string err = sim->discover(args, &text);
  EXPECT_EQ(err, "");
  IbnetReport rep;
  Status s = parseIbnetdiscover(text, "ibnetdiscover" + args, &found.fabric, &rep);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(rep.portForm, args.find("-p") != std::string::npos);
  classify(&found);
  return found;
}

void expectSameLinks(const Topology& gen, const Topology& found) {
  int unexpected = -1;
  std::vector<std::string> missing = missingLinks(gen.fabric, found.fabric, &unexpected);
  EXPECT_TRUE(missing.empty()) << missing.size() << " missing, first " << missing.front();
  EXPECT_EQ(unexpected, 0);
  EXPECT_EQ(found.fabric.numSwitches, gen.fabric.numSwitches);
  for (const Link& l : found.fabric.links) {
    EXPECT_EQ(l.width, 4);
    EXPECT_EQ(l.speed, "HDR");
    EXPECT_DOUBLE_EQ(l.gbps, 25.0);
  }
}

TEST(Ibsim, TwoLevelFatTreeTwoToOne) {
  SKIP_WITHOUT_IBSIM();
  synth::FatTreeParams p;
  p.leavesPerPod = 4;
  p.spinesPerPod = 2;
  p.hostsPerLeaf = 4;
  Topology gen;
  ASSERT_TRUE(synth::generateFatTree(p, &gen).ok());
  Ibsim sim;
  Topology t = discover(gen, "", &sim);
  expectSameLinks(gen, t);
  ASSERT_EQ(t.cls.type, FabricType::kFatTree) << summary(t);
  EXPECT_EQ(t.cls.levels, 2);
  EXPECT_EQ(t.cls.perLevel[0].switches, 4);
  EXPECT_EQ(t.cls.perLevel[1].switches, 2);
  EXPECT_DOUBLE_EQ(t.cls.perLevel[0].oversubscription, 2.0);
  EXPECT_EQ(t.cls.hosts, 16);
  EXPECT_TRUE(t.cls.oddities.empty()) << summary(t);
  // Hosts come from the CA descriptions ("node00001 mlx5_0").
  ASSERT_EQ(t.hosts.size(), 16u);
  EXPECT_EQ(t.hosts[0].name.substr(0, 4), "node");
  EXPECT_EQ(t.hosts[0].nics.at(0).name, "mlx5_0");
}

TEST(Ibsim, ThreeLevelFatTree) {
  SKIP_WITHOUT_IBSIM();
  synth::FatTreeParams p;
  p.levels = 3;
  p.pods = 3;
  p.leavesPerPod = 2;
  p.spinesPerPod = 2;
  p.cores = 4;
  p.hostsPerLeaf = 2;
  Topology gen;
  ASSERT_TRUE(synth::generateFatTree(p, &gen).ok());
  Ibsim sim;
  Topology t = discover(gen, "", &sim);
  expectSameLinks(gen, t);
  ASSERT_EQ(t.cls.type, FabricType::kFatTree) << summary(t);
  EXPECT_EQ(t.cls.levels, 3);
  ASSERT_EQ(t.cls.perLevel.size(), 3u);
  EXPECT_EQ(t.cls.perLevel[0].switches, 6);
  EXPECT_EQ(t.cls.perLevel[1].switches, 6);
  EXPECT_EQ(t.cls.perLevel[2].switches, 4);
  EXPECT_DOUBLE_EQ(t.cls.perLevel[0].oversubscription, 1.0);
  EXPECT_DOUBLE_EQ(t.cls.perLevel[1].oversubscription, 1.0);
  EXPECT_EQ(t.cls.perLevel[2].downLinks, 12);
  EXPECT_EQ(t.cls.hosts, 12);
}

TEST(Ibsim, RailOptimisedFatTree) {
  SKIP_WITHOUT_IBSIM();
  synth::FatTreeParams p;
  p.leavesPerPod = 2;
  p.spinesPerPod = 2;
  p.hostsPerLeaf = 4;
  p.rails = 2;
  Topology gen;
  ASSERT_TRUE(synth::generateFatTree(p, &gen).ok());
  Ibsim sim;
  Topology t = discover(gen, "", &sim);
  expectSameLinks(gen, t);
  ASSERT_EQ(t.cls.type, FabricType::kFatTree) << summary(t);
  EXPECT_EQ(t.cls.rails, 2);
  EXPECT_EQ(t.cls.hosts, 8);
  for (const Host& h : t.hosts) {
    ASSERT_EQ(h.nics.size(), 2u);
    EXPECT_NE(h.nics[0].rail, h.nics[1].rail);
  }
}

TEST(Ibsim, DragonflyPlusFiveGroups) {
  SKIP_WITHOUT_IBSIM();
  synth::DragonflyParams p;
  p.groups = 5;
  p.leavesPerGroup = 2;
  p.spinesPerGroup = 2;
  p.hostsPerLeaf = 3;
  p.globalLinksPerSpine = 2;
  Topology gen;
  ASSERT_TRUE(synth::generateDragonfly(p, &gen).ok());
  Ibsim sim;
  for (const char* args : {"", "-p"}) {
    SCOPED_TRACE(std::string("ibnetdiscover ") + args);
    Topology t = discover(gen, args, &sim, args[0] == '\0');
    if (args[0] == '\0') expectSameLinks(gen, t);
    ASSERT_EQ(t.cls.type, FabricType::kDragonflyPlus) << summary(t);
    EXPECT_EQ(t.cls.groups.size(), 5u);
    EXPECT_EQ(t.cls.leavesPerGroup, 2);
    EXPECT_EQ(t.cls.spinesPerGroup, 2);
    EXPECT_EQ(t.cls.hostsPerLeaf, 3);
    EXPECT_EQ(t.cls.globalLinksPerSpine, 2);
    EXPECT_EQ(t.cls.groupPairs.size(), 10u);
    EXPECT_TRUE(t.cls.tapered);  // 4 global links vs 6 hosts per group
    EXPECT_TRUE(t.cls.oddities.empty()) << summary(t);
  }
}

TEST(Ibsim, LinkTakenDownIsReported) {
  SKIP_WITHOUT_IBSIM();
  synth::FatTreeParams p;
  p.leavesPerPod = 4;
  p.spinesPerPod = 2;
  p.hostsPerLeaf = 2;
  Topology gen;
  ASSERT_TRUE(synth::generateFatTree(p, &gen).ok());
  Ibsim sim;
  ASSERT_EQ(sim.start(writeIbnetdiscover(gen.fabric)), "");
  // Pull the cable on leaf 1's first up port.
  const FabricNode& leaf = gen.fabric.nodes[1];
  int upPort = p.hostsPerLeaf + 1;
  char cmd[96];
  std::snprintf(cmd, sizeof(cmd), "Unlink \"S-%016" PRIx64 "\"[%d]", leaf.guid, upPort);
  ASSERT_EQ(sim.console(cmd), "");
  Topology t = discover(gen, "", &sim, false);
  EXPECT_EQ(t.cls.type, FabricType::kFatTree) << summary(t);
  bool named = std::any_of(t.cls.oddities.begin(), t.cls.oddities.end(), [&](const std::string& o) {
    return o.find(leaf.desc) != std::string::npos && o.find("up links") != std::string::npos;
  });
  EXPECT_TRUE(named) << summary(t);
  std::vector<std::string> missing = missingLinks(gen.fabric, t.fabric);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_NE(missing[0].find(leaf.desc + "[" + std::to_string(upPort) + "]"), std::string::npos)
      << missing[0];
  // ReLink restores the cable and the oddity goes away.
  std::snprintf(cmd, sizeof(cmd), "ReLink \"S-%016" PRIx64 "\"[%d]", leaf.guid, upPort);
  ASSERT_EQ(sim.console(cmd), "");
  Topology back = discover(gen, "", &sim, false);
  EXPECT_TRUE(missingLinks(gen.fabric, back.fabric).empty());
  EXPECT_TRUE(back.cls.oddities.empty()) << summary(back);
}

// An ibsim net file in its own form: nodes named, no GUIDs. ibsim makes the names the node
// descriptions, so `loom-topo --expect net.txt` matches by name (it used to report every link
// missing with blank names); a pulled cable is named.
TEST(Ibsim, NetFileWithoutGuidsComparesByName) {
  SKIP_WITHOUT_IBSIM();
  const std::string net =
      "Switch 8 \"Switch1\"\n[1] \"Hca1\"[1]\n[2] \"Switch2\"[1]\n[3] \"Switch2\"[3]\n\n"
      "Switch 8 \"Switch2\"\n[1] \"Switch1\"[2]\n[2] \"Hca2\"[1]\n[3] \"Switch1\"[3]\n\n"
      "Hca 1 \"Hca1\"\n[1] \"Switch1\"[1]\n\nHca 1 \"Hca2\"\n[1] \"Switch2\"[2]\n";
  Fabric want;
  ASSERT_TRUE(parseIbnetdiscover(net, "net.txt", &want).ok());
  Ibsim sim;
  ASSERT_EQ(sim.start(net), "");
  Topology t;
  {
    std::string text;
    ASSERT_EQ(sim.discover("", &text), "");
    ASSERT_TRUE(parseIbnetdiscover(text, "ibnetdiscover", &t.fabric).ok());
  }
  FabricDiff d;
  ASSERT_TRUE(compareFabrics(want, t.fabric, &d).ok());
  EXPECT_TRUE(d.byName);
  EXPECT_TRUE(d.missing.empty()) << d.missing.front();
  EXPECT_EQ(d.unexpected, 0);
  ASSERT_EQ(sim.console("Unlink \"Switch1\"[3]"), "");
  Topology u;
  {
    std::string text;
    ASSERT_EQ(sim.discover("", &text), "");
    ASSERT_TRUE(parseIbnetdiscover(text, "ibnetdiscover", &u.fabric).ok());
  }
  ASSERT_TRUE(compareFabrics(want, u.fabric, &d).ok());
  ASSERT_EQ(d.missing.size(), 1u);
  EXPECT_EQ(d.missing[0], "Switch1[3] - Switch2[3]");
}

// discoverTopology() running ibnetdiscover itself (no LOOM_IB_TOPO_FILE), and a host map for
// CAs whose descriptions carry no hostname.
TEST(Ibsim, DiscoverRunsIbnetdiscoverWithHostMap) {
  SKIP_WITHOUT_IBSIM();
  synth::FatTreeParams p;
  p.leavesPerPod = 2;
  p.spinesPerPod = 1;
  p.hostsPerLeaf = 2;
  Topology gen;
  ASSERT_TRUE(synth::generateFatTree(p, &gen).ok());
  std::string map = ::testing::TempDir() + "/loom_hostmap.txt";
  {
    std::ofstream m(map);
    m << "# guid hostname\n";
    for (int id = gen.fabric.numSwitches; id < gen.fabric.numNodes(); ++id) {
      FabricNode& n = gen.fabric.nodes[id];
      m << std::hex << "0x" << n.guid << std::dec << " \"gpu-" << id << "\"\n";
      n.desc = "MT4123 ConnectX6 Mellanox Technologies";  // no hostname in the description
    }
  }
  Ibsim sim;
  ASSERT_EQ(sim.start(writeIbnetdiscover(gen.fabric)), "");
  setenv("IBSIM_SOCKNAME", sim.sockName().c_str(), 1);
  setenv("LD_PRELOAD", Ibsim::preloadLibrary(), 1);  // inherited by the ibnetdiscover child only
  DiscoverOptions o;
  o.probeNode = false;
  o.runIbnetdiscover = true;
  o.hostMapFile = map;
  Topology t;
  Status s = discoverTopology(o, &t);
  unsetenv("LD_PRELOAD");
  unsetenv("IBSIM_SOCKNAME");
  std::remove(map.c_str());
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(t.cls.type, FabricType::kFatTree);
  ASSERT_EQ(t.hosts.size(), 4u);
  for (const Host& h : t.hosts) EXPECT_EQ(h.name.rfind("gpu-", 0), 0u) << h.name;
}

}  // namespace
}  // namespace loom::topo
