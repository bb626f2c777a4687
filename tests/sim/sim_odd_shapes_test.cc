// Hierarchical all-reduce on partly filled parts (issue 45, item 6): a last host with 2 of 22
// ranks on a Dragonfly+ of 96 hosts, a last host with 4 of 8 GPUs on a 3-level fat-tree. The
// builder keeps L = the largest part's rails and lets the small part's ranks carry several (it
// used to fold every part to the smallest, 10-30x slower); simulated within 20% of the full shape.
// Model: spray routing, no protocol overhead, NVLink 450 GB/s, 2 us + 0.3 us per switch.
#include <gtest/gtest.h>

#include "algo/registry.h"
#include "sim/engine.h"
#include "sim/from_topology.h"
#include "sim/schedule_set.h"
#include "topo/synth/synth.h"

namespace loom::sim {
namespace {

double simulateHier(const std::string& spec, const NodeParams& np, int ranks, const char* algo,
                    uint64_t bytes) {
  topo::Topology t;
  EXPECT_TRUE(topo::synth::generateFromSpec(spec, &t).ok());
  Net net(np);
  EXPECT_TRUE(netFromTopology(t, &net).ok());
  std::vector<int> hostOf(ranks);
  for (int r = 0; r < ranks; ++r) hostOf[r] = net.hostOfGpu(r);
  sched::CollArgs args;
  args.count = bytes / 4;
  ScheduleSet set(ranks);
  Status s = buildScheduleSet(algo::findAlgo(sched::CollType::kAllReduce, algo)->build, args, ranks,
                              hostOf, &set);
  EXPECT_TRUE(s.ok()) << s.toString();
  SimOptions o;
  o.routing = RoutingMode::kSpray;
  SimResult r;
  s = simulate(net, set, {}, o, &r);
  EXPECT_TRUE(s.ok()) << s.toString();
  return r.seconds;
}

TEST(SimOddShapes, DragonflyLastHostWithTwoOfTwentyTwoRanks) {
  const std::string df =
      "dragonfly:groups=4,leavesPerGroup=6,spinesPerGroup=4,hostsPerLeaf=4,globalLinksPerSpine=3,"
      "speed=NDR";
  NodeParams np;
  np.gpusPerNode = 22;
  np.nvlinkDomain = 22;
  np.nicsPerNode = 1;
  const double full = simulateHier(df, np, 96 * 22, "hier", 256 << 20);
  const double odd = simulateHier(df, np, 2048, "hier", 256 << 20);
  EXPECT_LT(odd, 1.2 * full) << "2,112 ranks " << full * 1e3 << " ms, 2,048 " << odd * 1e3 << " ms";
}

TEST(SimOddShapes, FatTreeLastHostHalfFilled) {
  const std::string ft =
      "fat-tree:levels=3,pods=2,leavesPerPod=2,spinesPerPod=8,cores=16,hostsPerLeaf=8,rails=8,"
      "speed=NDR";
  const double full = simulateHier(ft, NodeParams(), 96, "hier_tree", 256 << 20);
  const double odd = simulateHier(ft, NodeParams(), 100, "hier_tree", 256 << 20);
  EXPECT_LT(odd, 1.2 * full) << "96 ranks " << full * 1e3 << " ms, 100 " << odd * 1e3 << " ms";
}

}  // namespace
}  // namespace loom::sim
