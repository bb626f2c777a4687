// Folding symmetric ranks and links into classes (sim/fold.h) gives the same answer as the run
// without it: makespan, every rank's finish time and every link's bytes, on fat-trees (1:1, 2:1)
// and a Dragonfly+, for ring, double binary tree, hierarchical and Rabenseifner all-reduce, with
// spray, ECMP and Valiant routing; and folding backs off where the symmetry is not there (a failed
// link splits classes, UGAL is never folded).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "algo/registry.h"
#include "sim/engine.h"
#include "sim/fold.h"
#include "sim/from_topology.h"
#include "sim/schedule_set.h"
#include "topo/synth/synth.h"

namespace loom::sim {
namespace {

Status makeNet(const std::string& spec, std::unique_ptr<Net>* out) {
  topo::Topology t;
  LOOM_CHECK(topo::synth::generateFromSpec(spec, &t));
  *out = std::make_unique<Net>(NodeParams());  // 8 GPUs, 8 NICs, one NVLink domain per host
  return netFromTopology(t, out->get());
}

Status buildSet(const std::string& algo, uint64_t bytes, const Net& net, ScheduleSet* set) {
  const algo::AlgoInfo* a = algo::findAlgo(sched::CollType::kAllReduce, algo.c_str());
  if (!a) return invalidArgument("no builder ", algo);
  sched::CollArgs args;
  args.count = bytes / 4;
  args.chunkBytes = 256 * 1024;
  std::vector<int> hostOf(set->nranks());
  for (int r = 0; r < set->nranks(); ++r) hostOf[r] = net.hostOfGpu(r);
  return buildScheduleSet(a->build, args, set->nranks(), hostOf, set);
}

double relDiff(double a, double b) {
  double m = std::max(std::fabs(a), std::fabs(b));
  return m > 0 ? std::fabs(a - b) / m : 0.0;
}

// Runs `set` folded and unfolded; expects identical results and returns the folded one.
SimResult expectSameAsUnfolded(const Net& net, const ScheduleSet& set, SimOptions o,
                               const std::string& what) {
  SimResult folded, plain;
  o.fold = true;
  EXPECT_TRUE(simulate(net, set, {}, o, &folded).ok()) << what;
  o.fold = false;
  EXPECT_TRUE(simulate(net, set, {}, o, &plain).ok()) << what;
  EXPECT_LE(relDiff(folded.seconds, plain.seconds), 1e-9) << what << ": " << folded.foldNote;
  EXPECT_EQ(folded.flows, plain.flows) << what;
  EXPECT_EQ(folded.rankSeconds.size(), plain.rankSeconds.size());
  double worstRank = 0, worstLink = 0, maxBytes = 1;
  for (size_t r = 0; r < plain.rankSeconds.size(); ++r)
    worstRank = std::max(worstRank, relDiff(folded.rankSeconds[r], plain.rankSeconds[r]));
  for (double b : plain.linkBytes) maxBytes = std::max(maxBytes, b);
  for (size_t l = 0; l < plain.linkBytes.size(); ++l)
    worstLink = std::max(worstLink, std::fabs(folded.linkBytes[l] - plain.linkBytes[l]) / maxBytes);
  EXPECT_LE(worstRank, 1e-9) << what;
  EXPECT_LE(worstLink, 1e-9) << what;
  return folded;
}

struct FabricCase {
  const char* name;
  const char* spec;
  RoutingMode routing;
};

// 8 hosts x 8 GPUs (Dragonfly+: 16 hosts); rails=8: every GPU has its own NIC and rail leaf.
const FabricCase kFabrics[] = {
    {"nonblocking-spray",
     "fat-tree:levels=2,leavesPerPod=2,spinesPerPod=4,hostsPerLeaf=4,rails=8,speed=NDR",
     RoutingMode::kSpray},
    {"taper2-spray",
     "fat-tree:levels=2,leavesPerPod=2,spinesPerPod=2,hostsPerLeaf=4,rails=8,speed=NDR",
     RoutingMode::kSpray},
    {"taper2-ecmp",
     "fat-tree:levels=2,leavesPerPod=2,spinesPerPod=2,hostsPerLeaf=4,rails=8,speed=NDR",
     RoutingMode::kEcmp},
    {"dragonfly-spray",
     "dragonfly:groups=4,leavesPerGroup=2,spinesPerGroup=2,hostsPerLeaf=2,globalLinksPerSpine=2,"
     "speed=NDR",
     RoutingMode::kSpray},
    {"dragonfly-valiant",
     "dragonfly:groups=4,leavesPerGroup=2,spinesPerGroup=2,hostsPerLeaf=2,globalLinksPerSpine=2,"
     "speed=NDR",
     RoutingMode::kValiant},
};

class SimFold : public ::testing::TestWithParam<FabricCase> {};

TEST_P(SimFold, FoldedEqualsUnfolded) {
  const FabricCase& fc = GetParam();
  std::unique_ptr<Net> net;
  ASSERT_TRUE(makeNet(fc.spec, &net).ok()) << fc.spec;
  const int n = net->numGpus();
  for (const char* algo : {"ring", "tree", "hier", "rabenseifner"}) {
    if (!algo::findAlgo(sched::CollType::kAllReduce, algo)) continue;
    ScheduleSet set(n);
    ASSERT_TRUE(buildSet(algo, 4 << 20, *net, &set).ok()) << algo;
    SimOptions o;
    o.routing = fc.routing;
    o.foldMinMembers = 2;  // small fabrics: fold even 2 ranks per class
    std::string what = std::string(fc.name) + " " + algo;
    SimResult r = expectSameAsUnfolded(*net, set, o, what);
    // A flat ring with spray folds: on the fat-trees into 8 classes (one per GPU of a host; the
    // rail-optimised fabric looks the same from every host), on this small Dragonfly+ into 2 ranks
    // per class (the ring crosses groups at a few places only).
    if (std::string(algo) == "ring" && fc.routing == RoutingMode::kSpray) {
      bool fatTree = std::string(fc.spec).rfind("fat-tree", 0) == 0;
      EXPECT_GT(r.foldClasses, 0) << what << ": " << r.foldNote;
      EXPECT_LE(r.foldClasses, fatTree ? 8 : n / 2) << what << ": " << r.foldNote;
      EXPECT_LE(r.solverFlows * (fatTree ? 8 : 2), r.flows) << what;
    }
  }
}

// The tree-based plans fold by skeleton (fold.h): on a rail-optimised fat-tree a host's 8 GPUs
// run hier_tree's trees across hosts on 8 rail planes that look alike, and differ only in the peer
// of their ring inside the host (the next GPU is 1 or 1 - 8 away), so a class holds a host's GPUs.
// Same answers as unfolded (makespan, every rank's finish time, every link's bytes): to rounding
// with exact event times (timeEpsilon 0), and with the default 1 ps batching too.
TEST_P(SimFold, TreePlansFoldedEqualUnfolded) {
  const FabricCase& fc = GetParam();
  std::unique_ptr<Net> net;
  ASSERT_TRUE(makeNet(fc.spec, &net).ok()) << fc.spec;
  const int n = net->numGpus();
  for (const char* algo : {"hier_tree", "tree"}) {
    ScheduleSet set(n);
    ASSERT_TRUE(buildSet(algo, 4 << 20, *net, &set).ok()) << algo;
    for (double eps : {0.0, 1e-12}) {
      SimOptions o;
      o.routing = fc.routing;
      o.timeEpsilon = eps;
      o.foldMinMembers = 2;
      std::string what = strCat(fc.name, " ", algo, " timeEpsilon ", eps);
      SimResult r = expectSameAsUnfolded(*net, set, o, what);
      SimResult plain;
      o.fold = false;
      ASSERT_TRUE(simulate(*net, set, {}, o, &plain).ok());
      EXPECT_LE(relDiff(r.seconds, plain.seconds), 1e-12) << what;
      // hier_tree folds a host's 8 GPUs into one class wherever the rails look alike (spray and
      // Valiant; ECMP hashes each pair differently, and a flow's hash decides its spine).
      if (std::string(algo) == "hier_tree" && fc.routing != RoutingMode::kEcmp) {
        EXPECT_GT(r.foldClasses, 0) << what << ": " << r.foldNote;
        EXPECT_LE(r.foldClasses, n / 8) << what << ": " << r.foldNote;
        EXPECT_LE(r.solverFlows * 8, r.flows) << what;
      }
    }
  }
}

// Failed links make the rail planes differ: hier_tree's classes split (or it does not fold) and
// the answer stays the one without folding.
TEST(SimFoldFallback, FailedLinksSplitHierTreeClasses) {
  std::unique_ptr<Net> net;
  ASSERT_TRUE(
      makeNet("fat-tree:levels=2,leavesPerPod=2,spinesPerPod=4,hostsPerLeaf=4,rails=8,speed=NDR",
              &net)
          .ok());
  ScheduleSet set(net->numGpus());
  ASSERT_TRUE(buildSet("hier_tree", 4 << 20, *net, &set).ok());
  SimOptions o;
  o.foldMinMembers = 2;
  SimResult healthy = expectSameAsUnfolded(*net, set, o, "healthy");
  ASSERT_GT(healthy.foldClasses, 0) << healthy.foldNote;
  // Down, one after the other: the busiest tier-1 link, then the busiest from another switch.
  int first = -1, second = -1;
  for (int l = 0; l < net->numLinks(); ++l)
    if (net->link(l).level == LinkLevel::kTier1 &&
        (first < 0 || healthy.linkBytes[l] > healthy.linkBytes[first]))
      first = l;
  ASSERT_GE(first, 0);
  for (int l = 0; l < net->numLinks(); ++l)
    if (net->link(l).level == LinkLevel::kTier1 && net->link(l).from != net->link(first).from &&
        (second < 0 || healthy.linkBytes[l] > healthy.linkBytes[second]))
      second = l;
  ASSERT_GE(second, 0);
  for (int victim : {first, second}) {
    net->setLinkUp(victim, false);
    SimResult failed = expectSameAsUnfolded(*net, set, o, net->linkName(victim) + " down");
    EXPECT_TRUE(failed.foldClasses == 0 || failed.foldClasses > healthy.foldClasses)
        << healthy.foldNote << " / " << failed.foldNote;
    EXPECT_GE(failed.seconds, healthy.seconds * (1 - 1e-9));
  }
}

INSTANTIATE_TEST_SUITE_P(Fabrics, SimFold, ::testing::ValuesIn(kFabrics),
                         [](const ::testing::TestParamInfo<FabricCase>& i) {
                           std::string s = i.param.name;
                           std::replace(s.begin(), s.end(), '-', '_');
                           return s;
                         });

// A spine down breaks the symmetry: classes split (or folding is off), the answer stays the same.
TEST(SimFoldFallback, FailedSpineSplitsClassesAndKeepsTheAnswer) {
  std::unique_ptr<Net> net;
  ASSERT_TRUE(
      makeNet("fat-tree:levels=2,leavesPerPod=2,spinesPerPod=4,hostsPerLeaf=4,rails=8,speed=NDR",
              &net)
          .ok());
  const int n = net->numGpus();
  ScheduleSet set(n);
  ASSERT_TRUE(buildSet("ring", 4 << 20, *net, &set).ok());
  SimOptions o;
  SimResult healthy = expectSameAsUnfolded(*net, set, o, "healthy");
  ASSERT_GT(healthy.foldClasses, 0);
  // Take down the busiest leaf->spine link (not an injection link: every GPU still reaches every
  // other, the flows that crossed it spread over the remaining spines).
  int victim = -1;
  for (int l = 0; l < net->numLinks(); ++l)
    if (net->link(l).level == LinkLevel::kTier1 &&
        (victim < 0 || healthy.linkBytes[l] > healthy.linkBytes[victim]))
      victim = l;
  ASSERT_GE(victim, 0);
  ASSERT_GT(healthy.linkBytes[victim], 0);
  net->setLinkUp(victim, false);
  SimResult failed = expectSameAsUnfolded(*net, set, o, "one tier-1 link down");
  EXPECT_TRUE(failed.foldClasses == 0 || failed.foldClasses > healthy.foldClasses)
      << healthy.foldNote << " / " << failed.foldNote;
  EXPECT_GE(failed.seconds, healthy.seconds * (1 - 1e-9));
}

TEST(SimFoldFallback, UgalIsNotFolded) {
  std::unique_ptr<Net> net;
  ASSERT_TRUE(makeNet("dragonfly:groups=4,leavesPerGroup=2,spinesPerGroup=2,hostsPerLeaf=2,"
                      "globalLinksPerSpine=2,speed=NDR",
                      &net)
                  .ok());
  ScheduleSet set(net->numGpus());
  ASSERT_TRUE(buildSet("ring", 1 << 20, *net, &set).ok());
  SimOptions o;
  o.routing = RoutingMode::kUgal;
  SimResult r;
  ASSERT_TRUE(simulate(*net, set, {}, o, &r).ok());
  EXPECT_EQ(r.foldClasses, 0);
  EXPECT_NE(r.foldNote.find("UGAL"), std::string::npos) << r.foldNote;
  EXPECT_EQ(r.solverFlows, r.flows);
}

bool sameSteps(const Shape& a, const Shape& b) {
  if (a.steps.size() != b.steps.size() || a.deps != b.deps) return false;
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const SimStep& x = a.steps[i];
    const SimStep& y = b.steps[i];
    if (x.op != y.op || x.peerDelta != y.peerDelta || x.seq != y.seq || x.bytes != y.bytes ||
        x.depBegin != y.depBegin || x.depCount != y.depCount)
      return false;
  }
  return true;
}

// Building one schedule per period (ring: 1, hier: the ranks per host) and probing the rest gives
// every rank exactly the schedule the full build gives, for every registered all-reduce, with
// counts that do and do not divide into p, hosts of 8 ranks or one rank each; and the shortcut is
// taken where it should be (ring, hier; hier_tree by rotation inside hosts) and not where ranks
// differ (tree, uneven segments).
TEST(SimScheduleSet, SymmetricBuildEqualsFullBuild) {
  const std::vector<std::string> algos = {"ring", "hier", "hier_tree", "tree", "rabenseifner"};
  int shortcuts = 0;
  for (int p : {96, 128, 200}) {
    for (int perHost : {1, 8}) {
      std::vector<int> hostOf(p);
      for (int r = 0; r < p; ++r) hostOf[r] = r / perHost;
      for (uint64_t count : {uint64_t(p) * 3000, uint64_t(p) * 3000 + 5}) {
        for (const std::string& name : algos) {
          const algo::AlgoInfo* a = algo::findAlgo(sched::CollType::kAllReduce, name.c_str());
          if (!a) continue;
          sched::CollArgs args;
          args.count = count;
          args.chunkBytes = 8192;  // several pipeline loops
          ScheduleSet full(p), sym(p);
          Status sf = buildScheduleSet(a->build, args, p, hostOf, &full, false);
          Status ss = buildScheduleSet(a->build, args, p, hostOf, &sym, true);
          ASSERT_EQ(sf.ok(), ss.ok()) << name;
          if (!sf.ok()) continue;  // the builder does not take this p
          std::string what = strCat(name, " p=", p, " perHost=", perHost, " count=", count);
          EXPECT_EQ(full.numShapes(), sym.numShapes()) << what;
          EXPECT_EQ(full.totalSteps(), sym.totalSteps()) << what;
          for (int r = 0; r < p; ++r)
            ASSERT_TRUE(sameSteps(full.shapeOfRank(r), sym.shapeOfRank(r)))
                << what << " rank " << r;
          bool took = sym.built() < p;
          if (name == "ring" && count % p == 0) EXPECT_TRUE(took) << what;
          if ((name == "hier" || name == "hier_tree") && count % p == 0 && perHost == 8)
            EXPECT_TRUE(took) << what;
          if (name == "tree" || (name == "ring" && count % p != 0)) EXPECT_FALSE(took) << what;
          // Uneven segments: GPU j of a host moves other byte counts than GPU 0, no rotation.
          if (name == "hier_tree" && count % p != 0) EXPECT_FALSE(took) << what;
          shortcuts += took;
        }
      }
    }
  }
  EXPECT_GT(shortcuts, 0);
}

}  // namespace
}  // namespace loom::sim
