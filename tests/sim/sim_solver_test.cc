// The engine's shortcuts give the plain answer: MaxMin's local solves (seeds alone, checked for
// bottlenecks) against a global progressive filling on random flow sets, whole tree-based
// all-reduces (no folding: every rank is its own unit) against a global solve per batch, and
// messages whose two sides become ready out of order still pair by order on their connection.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "algo/registry.h"
#include "sim/engine.h"
#include "sim/from_topology.h"
#include "sim/maxmin.h"
#include "sim/schedule_set.h"
#include "sim/sim_test_util.h"
#include "topo/synth/synth.h"

namespace loom::sim {
namespace {

// Random flows (1-4 links, some sprayed) on links of a few capacities, started, ended, parked and
// restarted in random batches; after every batch each flow's rate from local solves equals the
// global solve's.
TEST(SimSolver, LocalSolvesEqualGlobalSolveOnRandomFlows) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 100; ++trial) {
    const int links = 6 + static_cast<int>(rng() % 40);
    std::vector<double> cap(links);
    for (double& c : cap) c = std::vector<double>{25e9, 50e9, 100e9, 450e9}[rng() % 4];
    std::vector<PathHop> pool;
    MaxMin local(&cap, &pool), global(&cap, &pool);
    global.setLocal(false);
    std::vector<std::pair<uint32_t, uint32_t>> live, parked;  // (local id, global id)
    double now = 0;
    for (int batch = 0; batch < 60; ++batch) {
      now += 1e-6;
      int starts = 1 + static_cast<int>(rng() % 6);
      for (int i = 0; i < starts; ++i) {
        uint32_t off = static_cast<uint32_t>(pool.size());
        uint32_t len = 1 + static_cast<uint32_t>(rng() % 4);
        std::vector<int32_t> used;  // a path crosses a link once
        for (uint32_t h = 0; h < len; ++h) {
          int32_t l = static_cast<int32_t>(rng() % links);
          if (std::find(used.begin(), used.end(), l) != used.end()) continue;
          used.push_back(l);
          double w = rng() % 3 == 0 ? 0.25 * (1 + rng() % 4) : 1.0;
          pool.push_back({l, w});
        }
        len = static_cast<uint32_t>(used.size());
        uint32_t a = local.addFlow(off, len, 1e6, now);
        uint32_t b = global.addFlow(off, len, 1e6, now);
        live.push_back({a, b});
      }
      // Some parked flows restart, some end; some live flows end, some park.
      for (size_t k = 0; k < parked.size();) {
        int what = static_cast<int>(rng() % 3);
        if (what == 2) {
          ++k;
          continue;
        }
        if (what == 0) {
          local.unpark(parked[k].first, 1e6, now);
          global.unpark(parked[k].second, 1e6, now);
          live.push_back(parked[k]);
        } else {
          local.removeFlow(parked[k].first, now);
          global.removeFlow(parked[k].second, now);
        }
        parked[k] = parked.back();
        parked.pop_back();
      }
      int ends = static_cast<int>(rng() % (live.size() / 2 + 1));
      for (int i = 0; i < ends && !live.empty(); ++i) {
        size_t k = rng() % live.size();
        if (rng() % 2) {
          local.park(live[k].first);
          global.park(live[k].second);
          parked.push_back(live[k]);
        } else {
          local.removeFlow(live[k].first, now);
          global.removeFlow(live[k].second, now);
        }
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
    o.fold = false;  // every rank's flows in the local solves (hier_tree folds by host, fold.h)
    SimResult fast, global;
    ASSERT_TRUE(simulate(net, set, {}, o, &fast).ok());
    o.components = false;
    ASSERT_TRUE(simulate(net, set, {}, o, &global).ok());
    EXPECT_NEAR(fast.seconds, global.seconds, 1e-9 * global.seconds);
    for (int r = 0; r < p; ++r)
      ASSERT_NEAR(fast.rankSeconds[r], global.rankSeconds[r], 1e-9 * global.seconds);
    for (int l = 0; l < net.numLinks(); ++l)
      ASSERT_NEAR(fast.linkBytes[l], global.linkBytes[l], 1e-6 * (1 + global.linkBytes[l]));
    EXPECT_LT(fast.recomputeFlows, global.recomputeFlows / 4);
  }
}

// Rank 0 sends three messages of S bytes to rank 1; its first waits for S bytes from rank 2, its
// others are ready at once. Rank 1 posts its three receives once a 0-byte note from rank 2 is in
// (alpha). So messages 1 and 2 pair first (the sends went ready out of order: the engine must look
// at the partner itself), and message 0 pairs when its send is ready (wire + alpha) and goes out
// behind them on the connection: rank 1 is done at alpha + 3 wire + alpha.
TEST(SimSolver, OutOfOrderReadyMessagesPairByOrder) {
  Net net(testing::oneGpuHosts());
  ASSERT_TRUE(testing::buildFatTree(testing::TinyFatTree{}, &net).ok());  // 50 GB/s
  const uint64_t S = 4 << 20;
  std::vector<sched::Schedule> ranks = testing::emptySchedules(3);
  sched::Schedule &a = ranks[0], &b = ranks[1], &c = ranks[2];
  int in = a.recv(2, {}, S);
  a.send(1, {}, S, {in});
  a.send(1, {}, S);
  a.send(1, {}, S);
  int note = b.recv(2, {}, 0);
  for (int k = 0; k < 3; ++k) b.recv(0, {}, S, {note});
  c.send(0, {}, S);
  c.send(1, {}, 0);
  SimOptions o;
  SimResult res;
  ASSERT_TRUE(testing::simulateUnfolded(net, ranks, &o, &res).ok());
  const double alpha = (o.latNetUs + o.latHopUs) * 1e-6, wire = S / 50e9;
  EXPECT_NEAR(res.rankSeconds[1], 3 * wire + 2 * alpha, 1e-9);
  EXPECT_NEAR(res.rankSeconds[0], 3 * wire + 2 * alpha, 1e-9);
}

}  // namespace
}  // namespace loom::sim
