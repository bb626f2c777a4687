// Rail-aligned multi-channel all-reduce (ring_rail) in the simulator, against closed forms:
// k channels on k NICs give k times one channel's bus bandwidth (each NIC carries one channel,
// 2(p-1)/p of n/k bytes); a 2:1 leaf taper costs it nothing, because every hop between hosts stays
// on its rail's leaf (the rotated NCCL-style channels of sim/channels.h cross rails, and halve).
// Model assumptions: spray routing, no protocol overhead, 8 GPUs and 8 x 50 GB/s NICs per host,
// NVLink 450 GB/s, 2 us + 0.3 us per switch per message, reductions at 1000 GB/s.
#include <gtest/gtest.h>

#include "algo/registry.h"
#include "sim/channels.h"
#include "sim/engine.h"
#include "sim/from_topology.h"
#include "sim/schedule_set.h"
#include "topo/synth/synth.h"

namespace loom::sim {
namespace {

struct SimRun {
  double seconds = 0, busbw = 0;
};

// All-reduce of `bytes` with ring_rail at `channels` (0: default) on every GPU of `spec`.
SimRun simulateRingRail(const std::string& spec, uint64_t bytes, int channels,
                        bool rotated = false) {
  topo::Topology t;
  EXPECT_TRUE(topo::synth::generateFromSpec(spec, &t).ok());
  Net net;
  EXPECT_TRUE(netFromTopology(t, &net).ok());
  const int p = net.numGpus();
  std::vector<int> hostOf(p);
  for (int r = 0; r < p; ++r) hostOf[r] = net.hostOfGpu(r);
  sched::CollArgs args;
  args.count = bytes / 4;
  args.channels = channels;
  ScheduleSet set(p);
  const algo::AlgoInfo* ring = algo::findAlgo(sched::CollType::kAllReduce, "ring");
  const algo::AlgoInfo* rail = algo::findAlgo(sched::CollType::kAllReduce, "ring_rail");
  Status s = rotated ? buildChannels(ring->build, args, p, hostOf, channels, &set)
                     : buildScheduleSet(rail->build, args, p, hostOf, &set);
  EXPECT_TRUE(s.ok()) << s.toString();
  SimOptions o;
  o.routing = RoutingMode::kSpray;
  SimResult r;
  s = simulate(net, set, {}, o, &r);
  EXPECT_TRUE(s.ok()) << s.toString();
  SimRun out;
  out.seconds = r.seconds;
  out.busbw = bytes / r.seconds * 2.0 * (p - 1) / p / 1e9;
  return out;
}

constexpr const char* kSixteen =  // 16 hosts x 8 GPUs, 8 rails, non-blocking
    "fat-tree:levels=2,leavesPerPod=2,spinesPerPod=8,hostsPerLeaf=8,rails=8,speed=NDR";

TEST(SimChannels, KRailAlignedChannelsGiveKTimesOneChannel) {
  const uint64_t n = 1ull << 30;
  const int p = 128;
  const SimRun one = simulateRingRail(kSixteen, n, 1);
  const SimRun eight = simulateRingRail(kSixteen, n, 8);
  // Closed form, NIC-bound: each channel's NIC carries 2(p-1)/p of n/k bytes at 50 GB/s; the first
  // message's latency (2 us + 0.3 us per switch) is not hidden.
  for (int k : {1, 8}) {
    const double want = 2.0 * (p - 1) / p * (n / k) / 50e9 + 2.3e-6;
    const double got = (k == 1 ? one : eight).seconds;
    EXPECT_NEAR(got / want, 1.0, 0.01)
        << "k=" << k << " sim " << got * 1e6 << " us, closed form " << want * 1e6 << " us";
  }
  EXPECT_NEAR(eight.busbw / one.busbw, 8.0, 0.08);
  EXPECT_NEAR(eight.busbw, 400, 4);
}

TEST(SimChannels, TwoToOneTaperCostsRailAlignedChannelsNothing) {
  // 64 hosts x 8 GPUs on 8 leaves per rail; 4 spines (2:1 at the leaves) or 8 (non-blocking).
  const std::string full =
      "fat-tree:levels=2,leavesPerPod=8,spinesPerPod=8,hostsPerLeaf=8,rails=8,speed=NDR";
  const std::string taper =
      "fat-tree:levels=2,leavesPerPod=8,spinesPerPod=4,hostsPerLeaf=8,rails=8,speed=NDR";
  const uint64_t n = 1ull << 30;
  const SimRun a = simulateRingRail(full, n, 8), b = simulateRingRail(taper, n, 8);
  EXPECT_GE(b.busbw, 0.99 * a.busbw) << "non-blocking " << a.busbw << ", 2:1 " << b.busbw;
  // The rotated channels enter the next host on another rail: through the spines, which the
  // taper halves.
  const SimRun r = simulateRingRail(taper, n, 8, /*rotated=*/true);
  EXPECT_LT(r.busbw, 0.6 * b.busbw) << "rotated " << r.busbw << ", rail-aligned " << b.busbw;
}

}  // namespace
}  // namespace loom::sim
