// The simulator on generated fabrics (src/topo/synth) with loom's registered builders: closed
// forms on a non-blocking fat-tree, the taper of a 2:1 fat-tree, what-if, Dragonfly+ routing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "algo/registry.h"
#include "sim/channels.h"
#include "sim/engine.h"
#include "sim/from_topology.h"
#include "sim/schedule_set.h"
#include "sim/whatif.h"
#include "topo/synth/synth.h"

namespace loom::sim {
namespace {

NodeParams oneGpu() {
  NodeParams p;
  p.gpusPerNode = 1;
  p.nvlinkDomain = 1;
  return p;
}

Status makeNet(const std::string& spec, const NodeParams& np, std::unique_ptr<Net>* out) {
  topo::Topology t;
  LOOM_CHECK(topo::synth::generateFromSpec(spec, &t));
  *out = std::make_unique<Net>(np);
  return netFromTopology(t, out->get());
}

Status buildSet(const char* algo, uint64_t bytes, int n, ScheduleSet* set) {
  const algo::AlgoInfo* a = algo::findAlgo(sched::CollType::kAllReduce, algo);
  if (!a) return invalidArgument("no builder ", algo);
  sched::CollArgs args;
  args.count = bytes / 4;
  return buildScheduleSet(a->build, args, n, {}, set);
}

// 16 hosts, 4 leaves x 4, 4 spines, NDR (50 GB/s): non-blocking.
constexpr const char* kFlat =
    "fat-tree:levels=2,leavesPerPod=4,spinesPerPod=4,hostsPerLeaf=4,speed=NDR";

TEST(SimFabric, RingAndRabenseifnerMatchAlphaBetaOnNonBlockingFatTree) {
  std::unique_ptr<Net> net;
  ASSERT_TRUE(makeNet(kFlat, oneGpu(), &net).ok());
  ASSERT_EQ(net->numGpus(), 16);
  const int p = 16;
  const double n = 8 << 20, B = 50e9;
  SimOptions o;
  o.latHopUs = 0;
  const double alpha = o.latNetUs * 1e-6, gamma = o.reduceGBps * 1e9;
  {
    ScheduleSet set(p);
    ASSERT_TRUE(buildSet("ring", n, p, &set).ok());
    SimResult r;
    ASSERT_TRUE(simulate(*net, set, {}, o, &r).ok());
    double want = 2 * (p - 1) * alpha + 2.0 * (p - 1) / p * n / B + (p - 1.0) / p * n / gamma;
    EXPECT_NEAR(r.seconds, want, 0.01 * want) << "ring";
  }
  if (algo::findAlgo(sched::CollType::kAllReduce, "rabenseifner")) {
    ScheduleSet set(p);
    ASSERT_TRUE(buildSet("rabenseifner", n, p, &set).ok());
    SimResult r;
    ASSERT_TRUE(simulate(*net, set, {}, o, &r).ok());
    double lg = std::log2(p);
    double want = 2 * lg * alpha + 2.0 * (p - 1) / p * n / B + (p - 1.0) / p * n / gamma;
    EXPECT_NEAR(r.seconds, want, 0.01 * want) << "rabenseifner";
  }
}

// 4 leaves x 4 hosts under 2 spines: 2:1. Placing ranks leaf-interleaved makes every ring hop
// leave its leaf (4 flows on 2 uplinks: B/2 each, bandwidth term x2); in leaf order one flow per
// leaf leaves and the ring runs at full rate.
TEST(SimFabric, TwoToOneFatTreeSlowsNaiveRingByTwoAndNotLeafOrdered) {
  std::unique_ptr<Net> net;
  ASSERT_TRUE(makeNet("fat-tree:levels=2,leavesPerPod=4,spinesPerPod=2,hostsPerLeaf=4,speed=NDR",
                      oneGpu(), &net)
                  .ok());
  const int p = 16;
  const double n = 64 << 20, B = 50e9;
  ScheduleSet set(p);
  ASSERT_TRUE(buildSet("ring", n, p, &set).ok());
  std::vector<int> naive(p);
  for (int r = 0; r < p; ++r) naive[r] = (r % 4) * 4 + r / 4;
  SimOptions o;
  o.latHopUs = 0;
  o.reduceGBps = 0;
  SimResult ordered, scattered;
  ASSERT_TRUE(simulate(*net, set, {}, o, &ordered).ok());
  ASSERT_TRUE(simulate(*net, set, naive, o, &scattered).ok());
  double beta = 2.0 * (p - 1) / p * n / B;
  double alphaPart = ordered.seconds - beta;  // latency and pipeline fill
  EXPECT_LT(alphaPart, 0.1 * beta);
  EXPECT_NEAR(ordered.seconds, alphaPart + beta, 0.01 * ordered.seconds);
  EXPECT_NEAR(scattered.seconds, alphaPart + 2 * beta, 0.01 * scattered.seconds);
}

TEST(SimFabric, FailedSpineCostsCrossLeafTraffic) {
  std::unique_ptr<Net> net;
  ASSERT_TRUE(makeNet(kFlat, oneGpu(), &net).ok());
  const int p = 16;
  ScheduleSet set(p);
  ASSERT_TRUE(buildSet("ring", 64 << 20, p, &set).ok());
  std::vector<int> naive(p);
  for (int r = 0; r < p; ++r) naive[r] = (r % 4) * 4 + r / 4;
  SimOptions o;
  SimResult healthy, failed;
  ASSERT_TRUE(simulate(*net, set, naive, o, &healthy).ok());
  std::vector<std::string> done;
  ASSERT_TRUE(applyFailures("spines:1", 7, net.get(), &done).ok());
  ASSERT_EQ(done.size(), 1u);
  ASSERT_TRUE(simulate(*net, set, naive, o, &failed).ok());
  EXPECT_GT(failed.seconds, 1.25 * healthy.seconds);  // 4 flows on 3 uplinks: ~4/3
  EXPECT_FALSE(applyFailures("spines:99", 7, net.get(), &done).ok());
}

// Dragonfly+: Valiant sends inter-group traffic over two global hops, minimal over one.
TEST(SimFabric, ValiantDoublesGlobalBytesOnDragonflyPlus) {
  NodeParams np = oneGpu();
  std::unique_ptr<Net> net;
  ASSERT_TRUE(makeNet("dragonfly:groups=4,leavesPerGroup=2,spinesPerGroup=2,hostsPerLeaf=2,"
                      "globalLinksPerSpine=3",
                      np, &net)
                  .ok());
  const int p = net->numGpus();
  ASSERT_EQ(p, 16);
  ScheduleSet set(p);
  ASSERT_TRUE(buildSet("ring", 16 << 20, p, &set).ok());
  auto globalBytes = [&](RoutingMode m, double* secs) {
    SimOptions o;
    o.routing = m;
    SimResult r;
    EXPECT_TRUE(simulate(*net, set, {}, o, &r).ok());
    *secs = r.seconds;
    double b = 0;
    for (int l = 0; l < net->numLinks(); ++l)
      if (net->link(l).level == LinkLevel::kGlobal) b += r.linkBytes[l];
    return b;
  };
  double tMin, tVal, tUgal;
  double minimal = globalBytes(RoutingMode::kSpray, &tMin);
  double valiant = globalBytes(RoutingMode::kValiant, &tVal);
  double ugal = globalBytes(RoutingMode::kUgal, &tUgal);
  ASSERT_GT(minimal, 0);
  EXPECT_NEAR(valiant / minimal, 2.0, 0.05);
  EXPECT_GE(ugal, minimal * 0.999);
  EXPECT_LE(ugal, valiant * 1.001);
  EXPECT_LE(tUgal, std::max(tMin, tVal) * 1.001);
}

// Coarse batching (loom-sim --batch-us) is an approximation: every event may complete up to
// timeEpsilon early. For algorithms with few large steps (Rabenseifner) 1 us stays within 1%
// of the exact-timing run on a 2:1 fat-tree. (Not for pipelined rings of small chunks: there
// early completions reshuffle contention and the makespan moved by up to +20% in our runs.)
TEST(SimFabric, MicrosecondBatchingStaysCloseToExact) {
  std::unique_ptr<Net> net;
  ASSERT_TRUE(makeNet("fat-tree:levels=2,leavesPerPod=4,spinesPerPod=2,hostsPerLeaf=4,rails=2,"
                      "speed=NDR",
                      NodeParams(), &net)
                  .ok());
  const int p = net->numGpus();
  ScheduleSet set(p);
  ASSERT_TRUE(buildSet("rabenseifner", 32 << 20, p, &set).ok());
  for (RoutingMode m : {RoutingMode::kEcmp, RoutingMode::kSpray}) {
    SimOptions o;
    o.routing = m;
    SimResult fine, coarse;
    ASSERT_TRUE(simulate(*net, set, {}, o, &fine).ok());
    o.timeEpsilon = 1e-6;
    ASSERT_TRUE(simulate(*net, set, {}, o, &coarse).ok());
    EXPECT_NEAR(coarse.seconds, fine.seconds, 0.01 * fine.seconds) << routingName(m);
    EXPECT_LE(coarse.recomputes, fine.recomputes) << routingName(m);
  }
}

// 8 NCCL-style channels on 8 x 400 Gb/s NICs per host: the ring's busbw reaches the hosts' NIC
// bandwidth (8 x 50 GB/s) for large messages.
TEST(SimFabric, EightChannelRingReachesHostNicBandwidth) {
  std::unique_ptr<Net> net;
  ASSERT_TRUE(makeNet("fat-tree:levels=2,leavesPerPod=2,spinesPerPod=4,hostsPerLeaf=2,rails=8,"
                      "speed=NDR",
                      NodeParams(), &net)
                  .ok());
  const int p = net->numGpus();
  ASSERT_EQ(p, 32);
  std::vector<int> hostOf(p);
  for (int r = 0; r < p; ++r) hostOf[r] = net->hostOfGpu(r);
  sched::CollArgs args;
  args.count = (512ull << 20) / 4;
  ScheduleSet set(p);
  ASSERT_TRUE(buildChannels(algo::findAlgo(sched::CollType::kAllReduce, "ring")->build, args, p,
                            hostOf, 8, &set)
                  .ok());
  SimResult r;
  ASSERT_TRUE(simulate(*net, set, {}, SimOptions(), &r).ok());
  double busbw = (512 << 20) / r.seconds * 2 * (p - 1) / p / 1e9;
  EXPECT_GT(busbw, 0.9 * 400);
  EXPECT_LE(busbw, 400 * 1.0001);
}

// loom's ring across the pods of a 3-level non-blocking fat-tree (4 pods x 2 leaves x 4 hosts, one
// GPU each, spray): every step is one message per ring edge, so the run is the chain of 2 (p-1)
// steps of the slowest starting point, each costing its edge's alpha (2 us + 0.3 us per switch:
// 1 on a leaf, 3 across leaves, 5 across pods) plus S / B, and S / gamma after each reduce-scatter
// receive. This is the case that went wrong at 16,384 GPUs (flows behind one NIC coupled the whole
// fabric through the spines); the large-message point also has several messages per NIC at once.
TEST(SimFabric, FlatRingAcrossPodsMatchesAlphaBeta) {
  std::unique_ptr<Net> net;
  ASSERT_TRUE(makeNet("fat-tree:levels=3,pods=4,leavesPerPod=2,spinesPerPod=4,cores=8,"
                      "hostsPerLeaf=4,speed=NDR",
                      oneGpu(), &net)
                  .ok());
  const int p = 32, hostsPerLeaf = 4, hostsPerPod = 8;
  ASSERT_EQ(net->numGpus(), p);
  SimOptions o;
  const double B = 50e9, gamma = o.reduceGBps * 1e9;
  auto alpha = [&](int a, int b) {
    int sw = a / hostsPerPod != b / hostsPerPod ? 5 : a / hostsPerLeaf != b / hostsPerLeaf ? 3 : 1;
    return (o.latNetUs + o.latHopUs * sw) * 1e-6;
  };
  for (double n : {256.0 * 1024, 16.0 * 1024 * 1024}) {  // one pipeline loop: S = n / p
    const double S = n / p;
    double want = 0;
    for (int r = 0; r < p; ++r) {  // the segment that starts at rank r
      double t = 0;
      for (int k = 0; k < 2 * (p - 1); ++k)
        t += alpha((r + k) % p, (r + k + 1) % p) + S / B + (k < p - 1 ? S / gamma : 0);
      want = std::max(want, t);
    }
    for (bool fold : {true, false}) {
      o.fold = fold;
      ScheduleSet set(p);
      ASSERT_TRUE(buildSet("ring", static_cast<uint64_t>(n), p, &set).ok());
      SimResult r;
      ASSERT_TRUE(simulate(*net, set, {}, o, &r).ok());
      EXPECT_NEAR(r.seconds, want, 0.01 * want) << n << " bytes, fold " << fold;
    }
  }
}

// Eight GPUs per host (NVLink inside, one NIC per rail): the NIC steps of a 16 MiB ring are slower
// than the NVLink ones, so several messages queue on each NIC and share it. The solver's shortcut
// (links that the flows' own NICs keep below capacity are left out of the rate solve) gives the
// same times and link bytes as the exact global solve, and the ring runs near NIC line rate.
TEST(SimFabric, QueuedNicFlowsSolveLikeExactGlobalSolve) {
  std::unique_ptr<Net> net;
  ASSERT_TRUE(makeNet("fat-tree:levels=3,pods=2,leavesPerPod=1,spinesPerPod=4,cores=32,"
                      "hostsPerLeaf=4,rails=8,speed=NDR",
                      NodeParams(), &net)
                  .ok());
  const int p = 64;
  const double n = 16 << 20;
  ScheduleSet set(p);
  ASSERT_TRUE(buildSet("ring", static_cast<uint64_t>(n), p, &set).ok());
  SimOptions o;
  SimResult fast, exact;
  ASSERT_TRUE(simulate(*net, set, {}, o, &fast).ok());
  o.exact = true;
  ASSERT_TRUE(simulate(*net, set, {}, o, &exact).ok());
  EXPECT_NEAR(fast.seconds, exact.seconds, 1e-9 * exact.seconds);
  for (int l = 0; l < net->numLinks(); ++l)
    ASSERT_NEAR(fast.linkBytes[l], exact.linkBytes[l], 1e-6 * (1 + exact.linkBytes[l]));
  EXPECT_LT(fast.recomputeFlows, exact.recomputeFlows / 10);
  double wire = 2.0 * (p - 1) / p * n / 50e9;  // each host's NIC carries this at line rate
  EXPECT_GT(fast.seconds, wire);
  EXPECT_LT(fast.seconds, 1.1 * wire);
}

}  // namespace
}  // namespace loom::sim
