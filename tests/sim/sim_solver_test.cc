// The rate solver's shortcuts give the global solve's answer: MaxMin's local solves (seeds alone,
// checked for bottlenecks) against a global progressive filling on random flow sets, and whole
// tree-based all-reduces (no folding: every rank is its own unit) against a global solve per batch.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <vector>

#include "algo/registry.h"
#include "sim/engine.h"
#include "sim/from_topology.h"
#include "sim/maxmin.h"
#include "sim/schedule_set.h"
#include "topo/synth/synth.h"

namespace loom::sim {
namespace {

// Random flows (1-4 hops, some sprayed) on links of a few capacities, started and ended in random
// batches; after every batch each flow's rate from local solves equals the global solve's.
TEST(SimSolver, LocalSolvesEqualGlobalSolveOnRandomFlows) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const int links = 6 + static_cast<int>(rng() % 40);
    std::vector<double> cap(links);
    for (double& c : cap) c = std::vector<double>{25e9, 50e9, 100e9, 450e9}[rng() % 4];
    std::vector<PathHop> pool;
    MaxMin local(&cap, &pool), global(&cap, &pool);
    global.setLocal(false);
    std::vector<std::pair<uint32_t, uint32_t>> live;  // (local id, global id)
    double now = 0;
    for (int batch = 0; batch < 60; ++batch) {
      now += 1e-6;
      int starts = 1 + static_cast<int>(rng() % 6);
      for (int i = 0; i < starts; ++i) {
        uint32_t off = static_cast<uint32_t>(pool.size());
        uint32_t len = 1 + static_cast<uint32_t>(rng() % 4);
        for (uint32_t h = 0; h < len; ++h) {
          double w = rng() % 3 == 0 ? 0.25 * (1 + rng() % 4) : 1.0;
          pool.push_back({static_cast<int32_t>(rng() % links), w});
        }
        uint32_t a = local.addFlow(off, len, 1e6, now);
        uint32_t b = global.addFlow(off, len, 1e6, now);
        live.push_back({a, b});
      }
      int ends = static_cast<int>(rng() % (live.size() / 2 + 1));
      for (int i = 0; i < ends && !live.empty(); ++i) {
        size_t k = rng() % live.size();
        local.removeFlow(live[k].first, now);
        global.removeFlow(live[k].second, now);
        live[k] = live.back();
        live.pop_back();
      }
      local.recompute(now, false, [](uint32_t, double, uint32_t) {});
      global.recompute(now, true, [](uint32_t, double, uint32_t) {});
      for (auto [a, b] : live)
        ASSERT_NEAR(local.rate(a), global.rate(b), 1e-9 * global.rate(b))
            << "trial " << trial << " batch " << batch;
    }
  }
}

struct TreeCase {
  const char* algo;
  const char* fabric;
  uint64_t bytes;
};

// 32 hosts x 8 GPUs (NVLink inside, 8 rails), 4 leaves per rail: a 1:1 fat-tree and a 2:1 one.
constexpr const char* kOneToOne =
    "fat-tree:levels=2,leavesPerPod=4,spinesPerPod=8,hostsPerLeaf=8,rails=8,speed=NDR";
constexpr const char* kTwoToOne =
    "fat-tree:levels=2,leavesPerPod=4,spinesPerPod=4,hostsPerLeaf=8,rails=8,speed=NDR";

// The double binary tree and the hierarchical tree at 256 GPUs: the default solver (local solves,
// idle connections kept to the end of a batch, events in FIFOs) gives the same times and link
// bytes as a global solve of every flow after every batch.
TEST(SimSolver, TreesEqualGlobalSolve) {
  for (TreeCase c :
       {TreeCase{"tree", kOneToOne, 32 << 20}, TreeCase{"tree", kTwoToOne, 32 << 20},
        TreeCase{"hier_tree", kOneToOne, 64 << 20}, TreeCase{"hier_tree", kTwoToOne, 64 << 20}}) {
    SCOPED_TRACE(std::string(c.algo) + " on " + c.fabric);
    topo::Topology t;
    ASSERT_TRUE(topo::synth::generateFromSpec(c.fabric, &t).ok());
    Net net{NodeParams()};
    ASSERT_TRUE(netFromTopology(t, &net).ok());
    const int p = 256;
    std::vector<int> hostOf(p);
    for (int r = 0; r < p; ++r) hostOf[r] = net.hostOfGpu(r);
    const algo::AlgoInfo* a = algo::findAlgo(sched::CollType::kAllReduce, c.algo);
    ASSERT_NE(a, nullptr);
    sched::CollArgs args;
    args.count = c.bytes / 4;
    ScheduleSet set(p);
    ASSERT_TRUE(buildScheduleSet(a->build, args, p, hostOf, &set).ok());
    SimOptions o;
    SimResult fast, global;
    ASSERT_TRUE(simulate(net, set, {}, o, &fast).ok());
    o.components = false;
    ASSERT_TRUE(simulate(net, set, {}, o, &global).ok());
    EXPECT_EQ(fast.foldClasses, 0);
    EXPECT_NEAR(fast.seconds, global.seconds, 1e-9 * global.seconds);
    for (int r = 0; r < p; ++r)
      ASSERT_NEAR(fast.rankSeconds[r], global.rankSeconds[r], 1e-9 * global.seconds);
    for (int l = 0; l < net.numLinks(); ++l)
      ASSERT_NEAR(fast.linkBytes[l], global.linkBytes[l], 1e-6 * (1 + global.linkBytes[l]));
    EXPECT_LT(fast.recomputeFlows, global.recomputeFlows / 4);
  }
}

}  // namespace
}  // namespace loom::sim
