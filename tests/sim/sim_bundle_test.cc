// Bundles of parallel switch links (Router::setBundles, SimOptions::bundle): a sprayed path that
// crosses every link of a bundle with one weight names only the bundle's representative, and the
// answer must not change. Bundled and unbundled runs (both unfolded) give the same makespan, rank
// finish times and per-link bytes for ring, double binary tree, hier and Rabenseifner on 3-level
// fat-trees, a 2:1 fat-tree and a Dragonfly+ (spray and Valiant), and with failed links, where a
// path crosses a bundle unevenly and simulate() reruns without bundles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "algo/registry.h"
#include "sim/engine.h"
#include "sim/from_topology.h"
#include "sim/routing.h"
#include "sim/schedule_set.h"
#include "sim/whatif.h"
#include "sim_fabric_util.h"
#include "topo/synth/synth.h"

namespace loom::sim {
namespace {

using Case = testing::FabricCase;

const Case kCases[] = {
    {"ft3_2pods",
     "fat-tree:levels=3,pods=2,leavesPerPod=8,spinesPerPod=4,cores=8,hostsPerLeaf=2,"
     "rails=8,speed=NDR",
     RoutingMode::kSpray, ""},
    {"ft3_3pods",
     "fat-tree:levels=3,pods=3,leavesPerPod=8,spinesPerPod=2,cores=4,hostsPerLeaf=2,"
     "rails=8,speed=NDR",
     RoutingMode::kSpray, ""},
    {"ft2_taper2",
     "fat-tree:levels=2,leavesPerPod=2,spinesPerPod=2,hostsPerLeaf=4,rails=8,speed=NDR",
     RoutingMode::kSpray, ""},
    {"dragonfly_spray",
     "dragonfly:groups=4,leavesPerGroup=2,spinesPerGroup=2,hostsPerLeaf=2,"
     "globalLinksPerSpine=2,speed=NDR",
     RoutingMode::kSpray, ""},
    {"dragonfly_valiant",
     "dragonfly:groups=4,leavesPerGroup=2,spinesPerGroup=2,hostsPerLeaf=2,"
     "globalLinksPerSpine=2,speed=NDR",
     RoutingMode::kValiant, ""},
    {"ft3_core_link_down",
     "fat-tree:levels=3,pods=2,leavesPerPod=8,spinesPerPod=4,cores=8,"
     "hostsPerLeaf=2,rails=8,speed=NDR",
     RoutingMode::kSpray, "links:2"},
    {"ft3_spine_down",
     "fat-tree:levels=3,pods=2,leavesPerPod=8,spinesPerPod=4,cores=8,"
     "hostsPerLeaf=2,rails=8,speed=NDR",
     RoutingMode::kSpray, "spines:1"},
};

double relDiff(double a, double b) {
  double m = std::max(std::fabs(a), std::fabs(b));
  return m > 0 ? std::fabs(a - b) / m : 0.0;
}

// All ranks' schedules of a 4 MiB all-reduce with `algo` on every GPU of `net`.
Status buildSet(const Net& net, const char* algo, ScheduleSet* set) {
  return testing::buildAllReduceSet(net, algo, (4 << 20) / 4, 256 * 1024, set);
}

class SimBundle : public ::testing::TestWithParam<Case> {};

TEST_P(SimBundle, BundledEqualsUnbundled) {
  const Case& c = GetParam();
  Net net{NodeParams()};
  ASSERT_TRUE(testing::netForCase(c, 3, &net).ok()) << c.spec << " " << c.fail;
  for (const char* algo : {"ring", "tree", "hier", "rabenseifner"}) {
    ScheduleSet set(net.numGpus());
    ASSERT_TRUE(buildSet(net, algo, &set).ok()) << algo;
    SimOptions o;
    o.routing = c.routing;
    o.fold = false;
    SimResult bundled, plain;
    ASSERT_TRUE(simulate(net, set, {}, o, &bundled).ok()) << c.name << " " << algo;
    o.bundle = false;
    ASSERT_TRUE(simulate(net, set, {}, o, &plain).ok()) << c.name << " " << algo;
    std::string what = std::string(c.name) + " " + algo + ": " + bundled.foldNote;
    EXPECT_LE(relDiff(bundled.seconds, plain.seconds), 1e-9) << what;
    EXPECT_EQ(bundled.flows, plain.flows) << what;
    double worstRank = 0, worstLink = 0, maxBytes = 1;
    for (size_t r = 0; r < plain.rankSeconds.size(); ++r)
      worstRank = std::max(worstRank, relDiff(bundled.rankSeconds[r], plain.rankSeconds[r]));
    for (double b : plain.linkBytes) maxBytes = std::max(maxBytes, b);
    for (size_t l = 0; l < plain.linkBytes.size(); ++l)
      worstLink =
          std::max(worstLink, std::fabs(bundled.linkBytes[l] - plain.linkBytes[l]) / maxBytes);
    EXPECT_LE(worstRank, 1e-9) << what;
    EXPECT_LE(worstLink, 1e-9) << what;
    // Healthy fat-trees bundle every run; the plain run never does.
    bool used = bundled.foldNote.find("bundles of parallel links") != std::string::npos;
    if (!*c.fail && std::string(c.spec).rfind("fat-tree", 0) == 0) EXPECT_TRUE(used) << what;
    EXPECT_EQ(plain.foldNote.find("bundles"), std::string::npos) << plain.foldNote;
  }
}

INSTANTIATE_TEST_SUITE_P(Fabrics, SimBundle, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

// A path that crosses a bundle unevenly (a core link down: the spine above it spreads over fewer
// cores, so the cores' links down into the other pod carry unequal shares) makes the run fall
// back to no bundles, and says so.
TEST(SimBundle, UnevenPathFallsBackAndSaysSo) {
  topo::Topology t;
  ASSERT_TRUE(topo::synth::generateFromSpec("fat-tree:levels=3,pods=2,leavesPerPod=8,"
                                            "spinesPerPod=4,cores=8,hostsPerLeaf=2,rails=8,"
                                            "speed=NDR",
                                            &t)
                  .ok());
  Net net{NodeParams()};
  ASSERT_TRUE(netFromTopology(t, &net).ok());
  int coreLink = -1;
  for (int l = 0; l < net.numLinks() && coreLink < 0; ++l)
    if (net.link(l).level == LinkLevel::kTier2) coreLink = l;
  ASSERT_GE(coreLink, 0);
  net.setLinkUp(coreLink, false);
  ScheduleSet set(net.numGpus());
  ASSERT_TRUE(buildSet(net, "rabenseifner", &set).ok());
  SimOptions o;
  o.fold = false;
  SimResult r;
  ASSERT_TRUE(simulate(net, set, {}, o, &r).ok());
  EXPECT_NE(r.foldNote.find("links not bundled"), std::string::npos) << r.foldNote;
}

}  // namespace
}  // namespace loom::sim

namespace loom::sim {
namespace {

// The switch part of a path is kept per leaf pair (Router::middle): a router that has routed many
// pairs gives every pair the same path as a fresh router, with bundles off and on, for spray and
// Valiant.
TEST(SimRouting, PathsKeptPerLeafPairEqualFreshOnes) {
  for (const Case& c : {kCases[1], kCases[4]}) {
    topo::Topology t;
    ASSERT_TRUE(topo::synth::generateFromSpec(c.spec, &t).ok()) << c.spec;
    Net net{NodeParams()};
    ASSERT_TRUE(netFromTopology(t, &net).ok());
    for (bool bundles : {false, true}) {
      Router shared(&net, c.routing, 7);
      shared.setBundles(bundles);
      const int n = net.numGpus();
      for (int s = 0; s < n; s += 5) {
        for (int d = n - 1; d >= 0; d -= 7) {
          Path a, b;
          ASSERT_TRUE(shared.route(s, d, nullptr, &a).ok());
          Router fresh(&net, c.routing, 7);
          fresh.setBundles(bundles);
          ASSERT_TRUE(fresh.route(s, d, nullptr, &b).ok());
          ASSERT_EQ(a.hops.size(), b.hops.size()) << c.name << " " << s << "->" << d;
          for (size_t i = 0; i < a.hops.size(); ++i) {
            EXPECT_EQ(a.hops[i].link, b.hops[i].link);
            EXPECT_EQ(a.hops[i].weight, b.hops[i].weight);
          }
          EXPECT_EQ(a.switchHops, b.switchHops);
        }
      }
    }
  }
}

}  // namespace
}  // namespace loom::sim
