// The planner with channels and rails: on a rail-optimised fat-tree of 8-GPU, 8-NIC hosts it picks
// the rail-aligned multi-channel ring for large all-reduces and predicts the bus bandwidth of 8
// NICs; its pattern prices the same as its real schedules; a forced ring_rail on one host is a
// multi-channel schedule that the checker proves exact. Model assumptions (as loom-sim's
// planner): NVLink 450 GB/s and 1 us, NIC 50 GB/s, 2 us per message + 0.3 us per switch,
// reductions at 1000 GB/s, no protocol overhead.
#include <gtest/gtest.h>

#include <set>

#include "plan/patterns.h"
#include "plan/planner.h"
#include "sched/checker.h"
#include "topo/classify.h"
#include "topo/synth/synth.h"

namespace loom::plan {
namespace {

CostParams gpuParams() {
  CostParams p;
  p.shmAlphaUs = 1;
  p.shmGBps = 450;
  p.hostMemGBps = 450 * 8;
  p.netAlphaUs = 2;
  p.switchHopUs = 0.3;
  p.netGBps = 50;
  p.reduceGBps = 1000;
  return p;
}

TEST(PlanChannels, RailFatTreePicksRailAlignedChannels) {
  topo::Topology t;
  ASSERT_TRUE(
      topo::synth::generateFromSpec(
          "fat-tree:levels=2,leavesPerPod=2,spinesPerPod=8,hostsPerLeaf=8,rails=8,speed=NDR", &t)
          .ok());
  topo::classify(&t);
  PlannerContext c;
  c.nranks = 128;
  for (int r = 0; r < 128; ++r) c.hostOf.push_back(r / 8);
  c.interHost = Transport::kNet;
  c.topology = &t;
  c.params = gpuParams();
  c.readEnv = false;
  Planner pl(c);
  for (uint64_t bytes : {1ull << 30, 8ull << 30}) {
    sched::CollArgs a;
    a.count = bytes / 4;
    const Decision& d = pl.choose(a);
    EXPECT_STREQ(d.algo->name, "ring_rail") << pl.explain(a);
    EXPECT_GE(d.channels, 8);
    // The model charges every round's message latency on top of its transfer, where the
    // simulator (and a real NIC) overlaps it with the previous message: it predicts 350-395 GB/s
    // where loom-sim gives 400 (tests/tools/loom_sim_channels.sh checks the simulated figure).
    const double busbw = bytes / d.predictedSec * 2 * 127 / 128 / 1e9;
    EXPECT_GT(busbw, 340) << d.describe();
    EXPECT_LE(busbw, 400.001) << d.describe();
  }
}

TEST(PlanChannels, ForcedRingRailOnOneHostIsMultiChannelAndExact) {
  PlannerContext c;
  c.nranks = 4;
  c.hostOf = {0, 0, 0, 0};
  c.interHost = Transport::kTcp;
  c.readEnv = false;
  c.algo = "allreduce:ring_rail";
  Planner pl(c);
  sched::CollArgs a;
  a.count = 100003;
  const Decision& d = pl.choose(a);
  ASSERT_STREQ(d.algo->name, "ring_rail");
  EXPECT_GE(d.channels, 4);
  sched::Schedule s;
  ASSERT_TRUE(pl.build(d, a, 1, &s).ok());
  std::set<int> channels;
  for (const sched::Step& st : s.steps) channels.insert(st.channel);
  EXPECT_EQ(static_cast<int>(channels.size()), d.channels);
  Status st =
      sched::checkCollective([&](const sched::CollArgs& args, const sched::Group& g,
                                 sched::Schedule* out) { return pl.build(d, args, g.rank, out); },
                             a, 4, c.hostOf);
  EXPECT_TRUE(st.ok()) << st.toString();
}

// One rank per host: ring_rail is the flat ring, not offered unless forced.
TEST(PlanChannels, NotOfferedWithOneRankPerHost) {
  PlannerContext c;
  c.nranks = 8;
  for (int r = 0; r < 8; ++r) c.hostOf.push_back(r);
  c.interHost = Transport::kTcp;
  c.readEnv = false;
  Planner pl(c);
  sched::CollArgs a;
  a.count = 1 << 24;
  for (const Decision& d : pl.candidates(a)) EXPECT_STRNE(d.algo->name, "ring_rail");
}

}  // namespace
}  // namespace loom::plan
