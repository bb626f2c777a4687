// Flow-level engine: closed forms on fat-trees, the batched/component solver against the exact
// global one, deadlock reports and what-if.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/engine.h"
#include "sim/schedule_set.h"
#include "sim/sim_test_util.h"

namespace loom::sim {
namespace {

using testing::buildFatTree;
using testing::identityOrder;
using testing::TinyFatTree;
using testing::tinyRing;

using testing::oneGpuHosts;

ScheduleSet ringSet(const std::vector<int>& order, uint64_t bytes) {
  ScheduleSet set(static_cast<int>(order.size()));
  for (size_t r = 0; r < order.size(); ++r) EXPECT_TRUE(set.add(tinyRing(r, order, bytes)).ok());
  return set;
}

// 2 (p-1) (alpha + S/(p B)) + (p-1) S / (p gamma)
double ringFormula(int p, double bytes, double alpha, double bps, double gammaBps) {
  return 2.0 * (p - 1) * (alpha + bytes / p / bps) + (p - 1) * bytes / p / gammaBps;
}

TEST(SimEngine, RingOnNonBlockingFatTreeMatchesAlphaBeta) {
  Net net(oneGpuHosts());
  ASSERT_TRUE(buildFatTree(TinyFatTree{}, &net).ok());  // 4 leaves x 4 hosts, 4 spines: 1:1
  const int p = 16;
  const uint64_t bytes = 64ull << 20;
  ScheduleSet set = ringSet(identityOrder(p), bytes);
  EXPECT_EQ(set.numShapes(), 1);  // every rank's ring is the same relative shape
  for (RoutingMode m : {RoutingMode::kEcmp, RoutingMode::kSpray}) {
    // Compute shared or not: a ring rank reduces one block at a time, so the same formula (with
    // reductions slow enough to count when shared).
    for (bool shared : {false, true}) {
      SimOptions o;
      o.routing = m;
      o.latHopUs = 0;  // one alpha for every path
      o.computeShared = shared;
      if (shared) o.reduceGBps = 20;
      SimResult res;
      ASSERT_TRUE(simulate(net, set, {}, o, &res).ok());
      double want = ringFormula(p, bytes, o.latNetUs * 1e-6, 50e9, o.reduceGBps * 1e9);
      EXPECT_NEAR(res.seconds, want, 0.01 * want) << routingName(m) << " shared " << shared;
      EXPECT_EQ(res.flows, static_cast<uint64_t>(2 * (p - 1) * p));
    }
  }
}

// 4 leaves x 8 hosts under 4 spines: 2:1. A ring that leaves its leaf at every hop puts 8 flows on
// 4 uplinks (each flow at B/2); one ordered by leaf crosses each leaf boundary once.
TEST(SimEngine, OversubscribedFatTreeSlowsNaiveRingByTheTaper) {
  Net net(oneGpuHosts());
  TinyFatTree t;
  t.hostsPerLeaf = 8;
  ASSERT_TRUE(buildFatTree(t, &net).ok());
  const int p = 32;
  const uint64_t bytes = 256ull << 20;
  std::vector<int> naive;
  for (int h = 0; h < 8; ++h)
    for (int l = 0; l < 4; ++l) naive.push_back(l * 8 + h);
  SimOptions o;
  o.routing = RoutingMode::kSpray;
  o.latHopUs = 0;
  o.reduceGBps = 0;
  SimResult fast, slow;
  ASSERT_TRUE(simulate(net, ringSet(identityOrder(p), bytes), {}, o, &fast).ok());
  ASSERT_TRUE(simulate(net, ringSet(naive, bytes), {}, o, &slow).ok());
  double alphaPart = 2.0 * (p - 1) * o.latNetUs * 1e-6;
  double beta = 2.0 * (p - 1) * bytes / p / 50e9;
  EXPECT_NEAR(fast.seconds, alphaPart + beta, 0.01 * fast.seconds);
  EXPECT_NEAR(slow.seconds, alphaPart + 2 * beta, 0.01 * slow.seconds);
  // ECMP can only do worse than the fluid spray (hash collisions on uplinks).
  o.routing = RoutingMode::kEcmp;
  SimResult ecmp;
  ASSERT_TRUE(simulate(net, ringSet(naive, bytes), {}, o, &ecmp).ok());
  EXPECT_GE(ecmp.seconds, slow.seconds * 0.999);
}

// The batched, component-restricted solver gives the answer of the global one; with spraying
// (no ties between flows finishing together) also that of the exact one-event-at-a-time run.
TEST(SimEngine, BatchedComponentsEqualExactGlobalSolve) {
  NodeParams np;
  np.gpusPerNode = 4;
  np.nicsPerNode = 2;
  np.nvlinkDomain = 4;
  Net net(np);
  TinyFatTree t;
  t.leaves = 2;
  t.spines = 2;
  t.hostsPerLeaf = 3;
  t.rails = 2;
  t.leafSpineGBps = 30;
  ASSERT_TRUE(buildFatTree(t, &net).ok());
  const int p = net.numGpus();
  std::vector<int> order;  // a scrambled ring: mixes NVLink, same-leaf and cross-spine hops
  for (int i = 0; i < p; ++i) order.push_back((i * 7) % p);
  for (RoutingMode m : {RoutingMode::kEcmp, RoutingMode::kSpray}) {
    for (uint64_t seed : {1, 2, 3}) {
      ScheduleSet set = ringSet(order, (3ull << 20) + 4096 * seed);
      SimOptions o;
      o.routing = m;
      o.seed = seed;
      SimResult fast, exact;
      ASSERT_TRUE(simulate(net, set, {}, o, &fast).ok());
      o.components = false;
      if (m == RoutingMode::kSpray) o.exact = true;
      ASSERT_TRUE(simulate(net, set, {}, o, &exact).ok());
      EXPECT_NEAR(fast.seconds, exact.seconds, 1e-9 * exact.seconds);
      for (int l = 0; l < net.numLinks(); ++l)
        ASSERT_NEAR(fast.linkBytes[l], exact.linkBytes[l], 1e-6 * (1 + exact.linkBytes[l]));
      EXPECT_LE(fast.recomputeFlows, exact.recomputeFlows);
    }
  }
}

// Rank 0 sends two messages of S to rank 1; when the first is in, rank 1 sends an empty one to 2.
std::vector<sched::Schedule> twoQueuedMessages(uint64_t S) {
  std::vector<sched::Schedule> r(3);
  for (int i = 0; i < 3; ++i) {
    r[i].rank = i;
    r[i].nranks = 3;
  }
  r[0].send(1, {}, S);
  r[0].send(1, {}, S);
  int first = r[1].recv(0, {}, S);
  r[1].recv(0, {}, S);
  r[1].send(2, {}, 0, {first});
  r[2].recv(1, {}, 0);
  return r;
}

// Two messages from rank 0 to rank 1, ready together, share one connection and go out in order:
// the first is in after S / B (rank 1 then tells rank 2 with an empty message), the second after
// 2 S / B. As two flows sharing the NIC both would take 2 S / B, and a pipelined ring that queues
// messages behind a NIC would move in bursts.
TEST(SimEngine, MessagesOnOneConnectionGoOutInOrder) {
  Net net(oneGpuHosts());
  ASSERT_TRUE(buildFatTree(TinyFatTree{}, &net).ok());  // 3 hosts on one leaf, 50 GB/s
  const uint64_t S = 4 << 20;
  SimOptions o;
  SimResult res;
  ASSERT_TRUE(testing::simulateUnfolded(net, twoQueuedMessages(S), &o, &res).ok());
  const double alpha = (o.latNetUs + o.latHopUs) * 1e-6, wire = S / 50e9;
  EXPECT_NEAR(res.rankSeconds[2], wire + 2 * alpha, 1e-9);
  EXPECT_NEAR(res.rankSeconds[1], 2 * wire + alpha, 1e-9);
}

// traceSteps: each step's ready and done times. The two messages above: rank 1's first receive
// is done at S / B + alpha, its second at 2 S / B + alpha; its empty send to rank 2 becomes ready
// when the first is done and is done alpha later, as is rank 2's receive (ready at 0).
TEST(SimEngine, StepTraceGivesEachStepsReadyAndDoneTimes) {
  Net net(oneGpuHosts());
  ASSERT_TRUE(buildFatTree(TinyFatTree{}, &net).ok());
  const uint64_t S = 4 << 20;
  SimOptions o;
  o.traceSteps = true;
  SimResult res;
  ASSERT_TRUE(testing::simulateUnfolded(net, twoQueuedMessages(S), &o, &res).ok());
  const double alpha = (o.latNetUs + o.latHopUs) * 1e-6, wire = S / 50e9;
  ASSERT_EQ(res.stepStartSeconds.size(), 3u);
  ASSERT_EQ(res.stepEndSeconds[1].size(), 3u);
  EXPECT_NEAR(res.stepStartSeconds[0][1], 0, 1e-12);
  EXPECT_NEAR(res.stepEndSeconds[0][1], 2 * wire + alpha, 1e-9);
  EXPECT_NEAR(res.stepEndSeconds[1][0], wire + alpha, 1e-9);
  EXPECT_NEAR(res.stepEndSeconds[1][1], 2 * wire + alpha, 1e-9);
  EXPECT_NEAR(res.stepStartSeconds[1][2], wire + alpha, 1e-9);
  EXPECT_NEAR(res.stepEndSeconds[1][2], wire + 2 * alpha, 1e-9);
  EXPECT_NEAR(res.stepStartSeconds[2][0], 0, 1e-12);
  EXPECT_NEAR(res.stepEndSeconds[2][0], res.rankSeconds[2], 1e-12);
  // Off by default: nothing recorded.
  SimOptions off;
  ASSERT_TRUE(testing::simulateUnfolded(net, twoQueuedMessages(S), &off, &res).ok());
  EXPECT_TRUE(res.stepStartSeconds.empty());
}

// A folded 16-rank ring traced: every rank gets its class's times, each step starts no earlier than
// the steps it depends on end, and each rank's last end is its finish time.
TEST(SimEngine, StepTraceOfAFoldedRingFollowsTheDependencies) {
  Net net(oneGpuHosts());
  ASSERT_TRUE(buildFatTree(TinyFatTree{}, &net).ok());
  const int p = 16;
  std::vector<sched::Schedule> scheds;
  ScheduleSet set(p);
  for (int r = 0; r < p; ++r) {
    scheds.push_back(tinyRing(r, identityOrder(p), 1 << 20));
    ASSERT_TRUE(set.add(scheds.back()).ok());
  }
  SimOptions o;
  o.traceSteps = true;
  SimResult res;
  ASSERT_TRUE(simulate(net, set, {}, o, &res).ok());
  EXPECT_GT(res.foldClasses, 0) << res.foldNote;
  ASSERT_EQ(res.stepEndSeconds.size(), static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) {
    const sched::Schedule& s = scheds[r];
    ASSERT_EQ(res.stepEndSeconds[r].size(), s.steps.size());
    double last = 0;
    for (size_t i = 0; i < s.steps.size(); ++i) {
      const double start = res.stepStartSeconds[r][i], end = res.stepEndSeconds[r][i];
      EXPECT_GE(start, 0) << "rank " << r << " step " << i;
      EXPECT_GE(end, start) << "rank " << r << " step " << i;
      for (uint32_t k = 0; k < s.steps[i].depCount; ++k)
        EXPECT_GE(start + 1e-12, res.stepEndSeconds[r][s.deps[s.steps[i].depBegin + k]]);
      last = std::max(last, end);
    }
    EXPECT_NEAR(last, res.rankSeconds[r], 1e-12);
  }
}

TEST(SimEngine, UnmatchedSendIsReportedAsDeadlock) {
  Net net(oneGpuHosts());
  ASSERT_TRUE(buildFatTree(TinyFatTree{}, &net).ok());
  ScheduleSet set(2);
  sched::Schedule a, b;
  a.rank = 0;
  a.nranks = 2;
  a.send(1, {}, 100);
  b.rank = 1;
  b.nranks = 2;
  ASSERT_TRUE(set.add(a).ok());
  ASSERT_TRUE(set.add(b).ok());
  SimResult res;
  Status s = simulate(net, set, {}, SimOptions(), &res);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("rank 0 step 0 (send 100 bytes, peer 1"), std::string::npos)
      << s.message();
}

TEST(SimEngine, SizeMismatchNamesBothRanks) {
  Net net(oneGpuHosts());
  ASSERT_TRUE(buildFatTree(TinyFatTree{}, &net).ok());
  ScheduleSet set(2);
  sched::Schedule a, b;
  a.rank = 0;
  a.nranks = 2;
  a.send(1, {}, 100);
  b.rank = 1;
  b.nranks = 2;
  b.recv(0, {}, 64);
  ASSERT_TRUE(set.add(a).ok());
  ASSERT_TRUE(set.add(b).ok());
  SimResult res;
  Status s = simulate(net, set, {}, SimOptions(), &res);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("rank 0 sends 100 bytes to rank 1"), std::string::npos) << s.message();
}

// What-if: one spine of four fails; a ring that crosses leaves at every hop has 4 flows per leaf
// on 3 uplinks: its bandwidth term grows by 4/3.
TEST(SimEngine, FailedSpineSlowsCrossLeafRing) {
  Net net(oneGpuHosts());
  ASSERT_TRUE(buildFatTree(TinyFatTree{}, &net).ok());
  const int p = 16;
  std::vector<int> naive;
  for (int h = 0; h < 4; ++h)
    for (int l = 0; l < 4; ++l) naive.push_back(l * 4 + h);
  const uint64_t bytes = 128ull << 20;
  ScheduleSet set = ringSet(naive, bytes);
  SimOptions o;
  o.latHopUs = 0;
  o.reduceGBps = 0;
  SimResult before, after;
  ASSERT_TRUE(simulate(net, set, {}, o, &before).ok());
  int spine0 = net.switches()[4];
  ASSERT_EQ(net.node(spine0).tier, 2);
  net.setSwitchUp(spine0, false);
  ASSERT_TRUE(simulate(net, set, {}, o, &after).ok());
  double alphaPart = 2.0 * (p - 1) * o.latNetUs * 1e-6;
  EXPECT_NEAR((after.seconds - alphaPart) / (before.seconds - alphaPart), 4.0 / 3.0, 0.01);
  for (int l = 0; l < net.numLinks(); ++l) {
    if (!net.link(l).up) {
      EXPECT_EQ(after.linkBytes[l], 0.0);
    }
  }
}

}  // namespace
}  // namespace loom::sim
