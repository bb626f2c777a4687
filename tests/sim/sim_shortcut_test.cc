// Shortcuts of the engine that rely on how loom's schedules look, each against the plain path:
// - per-step dependency counts only for steps with several dependencies, and waiting marks only
//   for messages that became ready out of order on their connection (SimOptions::trackSteps off,
//   the default) give the same answer as counts for every step (on): the same makespan, rank
//   finish times, link bytes and event counts, bit for bit, for ring, double binary tree, hier,
//   hier_tree and Rabenseifner on fat-trees (spray, ECMP, a failed link) and a Dragonfly+
//   (Valiant, UGAL), folded and not; and a deadlock still names the step;
// - flow ends in a radix heap (monotone keys) pop in the order a binary heap gives.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>

#include "sim/engine.h"
#include "sim/maxmin.h"
#include "sim/schedule_set.h"
#include "sim_fabric_util.h"
#include "sim_test_util.h"

namespace loom::sim {
namespace {

using Case = testing::FabricCase;

const Case kCases[] = {
    {"ft3_spray",
     "fat-tree:levels=3,pods=2,leavesPerPod=4,spinesPerPod=4,cores=8,hostsPerLeaf=2,rails=8,"
     "speed=NDR",
     RoutingMode::kSpray, ""},
    {"ft2_ecmp", "fat-tree:levels=2,leavesPerPod=4,spinesPerPod=2,hostsPerLeaf=4,rails=8,speed=NDR",
     RoutingMode::kEcmp, ""},
    {"ft2_link_down",
     "fat-tree:levels=2,leavesPerPod=4,spinesPerPod=2,hostsPerLeaf=4,rails=8,speed=NDR",
     RoutingMode::kSpray, "links:3"},
    {"dragonfly_valiant",
     "dragonfly:groups=4,leavesPerGroup=2,spinesPerGroup=2,hostsPerLeaf=2,"
     "globalLinksPerSpine=2,speed=NDR",
     RoutingMode::kValiant, ""},
    {"dragonfly_ugal",
     "dragonfly:groups=4,leavesPerGroup=2,spinesPerGroup=2,hostsPerLeaf=2,"
     "globalLinksPerSpine=2,speed=NDR",
     RoutingMode::kUgal, ""},
};

void expectSame(const SimResult& a, const SimResult& b, const std::string& what) {
  EXPECT_EQ(a.seconds, b.seconds) << what;
  EXPECT_EQ(a.rankSeconds, b.rankSeconds) << what;
  EXPECT_EQ(a.linkBytes, b.linkBytes) << what;
  EXPECT_EQ(a.flows, b.flows) << what;
  EXPECT_EQ(a.events, b.events) << what;
  EXPECT_EQ(a.batches, b.batches) << what;
  EXPECT_EQ(a.solverFlows, b.solverFlows) << what;
}

class SimShortcut : public ::testing::TestWithParam<Case> {};

TEST_P(SimShortcut, UntrackedStepsEqualTracked) {
  const Case& c = GetParam();
  Net net{NodeParams()};
  ASSERT_TRUE(testing::netForCase(c, 5, &net).ok()) << c.spec << " " << c.fail;
  for (const char* algo : {"ring", "tree", "hier", "hier_tree", "rabenseifner"}) {
    ScheduleSet set(net.numGpus());
    // Uneven pieces: chunks of two sizes.
    ASSERT_TRUE(testing::buildAllReduceSet(net, algo, (3 << 20) / 4 + 5, 128 * 1024, &set).ok())
        << algo;
    for (bool fold : {false, true}) {
      SimOptions o;
      o.routing = c.routing;
      o.fold = fold;
      SimResult fast, tracked;
      ASSERT_TRUE(simulate(net, set, {}, o, &fast).ok()) << c.name << " " << algo;
      o.trackSteps = true;
      ASSERT_TRUE(simulate(net, set, {}, o, &tracked).ok()) << c.name << " " << algo;
      expectSame(fast, tracked, std::string(c.name) + " " + algo + (fold ? " folded" : ""));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fabrics, SimShortcut, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

// Hand-written: rank 0's three sends to rank 1 become ready out of order (the first waits for a
// message from rank 2), rank 1's receives too (the last is posted first), and rank 1's final step
// waits for three dependencies. Untracked equals tracked.
TEST(SimShortcutHand, OutOfOrderAndManyDependencies) {
  Net net(testing::oneGpuHosts());
  ASSERT_TRUE(testing::buildFatTree(testing::TinyFatTree{}, &net).ok());
  const uint64_t S = 1 << 20;
  std::vector<sched::Schedule> ranks = testing::emptySchedules(3);
  sched::Schedule &a = ranks[0], &b = ranks[1], &c = ranks[2];
  int in = a.recv(2, {}, S);
  a.send(1, {}, S, {in});
  a.send(1, {}, S);
  a.send(1, {}, 2 * S);
  int note = b.recv(2, {}, 0);
  int slow = b.copy({}, {}, 64 * S);
  int r0 = b.recv(0, {}, S, {slow});
  int r1 = b.recv(0, {}, S, {slow});
  int r2 = b.recv(0, {}, 2 * S, {note});
  b.reduce({}, {}, S, {r0, r1, r2});
  c.send(0, {}, S);
  c.send(1, {}, 0);
  SimOptions o;
  SimResult fast, tracked;
  ASSERT_TRUE(testing::simulateUnfolded(net, ranks, &o, &fast).ok());
  o.trackSteps = true;
  ASSERT_TRUE(testing::simulateUnfolded(net, ranks, &o, &tracked).ok());
  expectSame(fast, tracked, "hand-written");
  EXPECT_GT(fast.rankSeconds[1], 64 * S / (o.copyGBps * 1e9));  // the reduce waited for all three
}

// A send nobody receives: the untracked run deadlocks, runs again tracked, and names the step.
TEST(SimShortcutHand, DeadlockStillNamesTheStep) {
  Net net(testing::oneGpuHosts());
  ASSERT_TRUE(testing::buildFatTree(testing::TinyFatTree{}, &net).ok());
  std::vector<sched::Schedule> ranks = testing::emptySchedules(2);
  sched::Schedule &a = ranks[0], &b = ranks[1];
  a.send(1, {}, 1024);
  int x = a.send(1, {}, 1024);
  a.copy({}, {}, 1024, {x});
  b.recv(0, {}, 1024);
  for (bool track : {false, true}) {
    SimOptions o;
    o.trackSteps = track;
    SimResult res;
    Status s = testing::simulateUnfolded(net, ranks, &o, &res);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("rank 0 step 2"), std::string::npos) << s.message();
  }
}

// The radix heap of flow ends pops the smallest key each time (keys just below the last popped
// count as equal to it), every entry once, with pushes between a peek and its pop.
TEST(SimShortcutHeap, RadixHeapPopsInKeyOrder) {
  struct E {
    double t;
    uint32_t id;
  };
  RadixHeap<E> radix;
  std::set<std::pair<double, uint32_t>> live;  // the reference
  std::mt19937_64 rng(7);
  double last = 0;
  for (uint32_t i = 0; i < 200000; ++i) {
    if (rng() % 3 < 2 || live.empty()) {
      const int r = static_cast<int>(rng() % 8);
      const double t = r == 0 ? last : r == 1 ? last * (1 - 1e-16) : last + (rng() % 1000) * 1e-9;
      radix.push({t, i});
      live.insert({t, i});
      continue;
    }
    const E got = radix.top();
    ASSERT_EQ(std::max(got.t, last), std::max(live.begin()->first, last)) << i;
    ASSERT_EQ(live.erase({got.t, got.id}), 1u) << "entry " << got.id << " popped twice";
    last = std::max(last, got.t);
    radix.pop();
    ASSERT_EQ(radix.size(), live.size());
  }
}

}  // namespace
}  // namespace loom::sim
