// The calibrated parts of the planner: two-level message latency and cache-dependent bandwidth in
// the cost model, the one-host direct path as a priced candidate, and the measured tuning table,
// which holds only for the communicator shape it was measured on.
#include <gtest/gtest.h>

#include "plan/planner.h"

namespace loom::plan {
namespace {

Placement oneHost(int p) {
  Placement pl;
  pl.nranks = p;
  pl.hostOf.assign(p, 0);
  return pl;
}

Placement tcpRanks(int p) {
  Placement pl;
  pl.nranks = p;
  for (int r = 0; r < p; ++r) pl.hostOf.push_back(r);
  pl.interHost = Transport::kTcp;
  return pl;
}

sched::CollArgs allreduce(uint64_t bytes) {
  sched::CollArgs a;
  a.count = bytes / 4;
  return a;
}

PlannerContext context(int p, bool shm) {
  PlannerContext c;
  c.nranks = p;
  for (int r = 0; r < p; ++r) c.hostOf.push_back(shm ? 0 : r);
  c.interHost = Transport::kTcp;
  c.readEnv = false;
  return c;
}

// A message above the eager size pays the second latency level; one within the cache size moves
// at the cache rate; with both terms off (the defaults) the model is the one-level one.
TEST(ModelTerms, TwoLevelLatencyAndCacheBandwidth) {
  CostParams cp;
  const CostModel plain(oneHost(2), cp);
  EXPECT_DOUBLE_EQ(plain.alpha(0, 1, 8), plain.alpha(0, 1, 1 << 20));
  EXPECT_DOUBLE_EQ(plain.flowGBps(0, 1, 4096), cp.shmGBps);
  cp.shmEagerBytes = 1024, cp.shmBigAlphaUs = 6, cp.shmCacheBytes = 65536, cp.shmCacheGBps = 12;
  cp.tcpEagerBytes = 4096, cp.tcpBigAlphaUs = 9, cp.tcpCacheBytes = 65536, cp.tcpCacheGBps = 3;
  const CostModel shm(oneHost(2), cp), tcp(tcpRanks(2), cp);
  EXPECT_NEAR(shm.alpha(0, 1, 1024), cp.shmAlphaUs * 1e-6, 1e-12);
  EXPECT_NEAR(shm.alpha(0, 1, 1025), (cp.shmAlphaUs + 6) * 1e-6, 1e-12);
  EXPECT_NEAR(tcp.alpha(0, 1, 4096), cp.tcpAlphaUs * 1e-6, 1e-12);
  EXPECT_NEAR(tcp.alpha(0, 1, 8192), (cp.tcpAlphaUs + 9) * 1e-6, 1e-12);
  EXPECT_DOUBLE_EQ(shm.flowGBps(0, 1, 65536), 12);
  EXPECT_DOUBLE_EQ(shm.flowGBps(0, 1, 65537), cp.shmGBps);
  EXPECT_DOUBLE_EQ(tcp.flowGBps(0, 1, 1000), 3);
  EXPECT_DOUBLE_EQ(tcp.flowGBps(0, 1, 1 << 20), cp.tcpGBps);
  // A round of one 4 KiB message: second-level latency plus the transfer at the cache rate.
  Round r;
  r.flows = {{0, 1, 4096}};
  const RoundCost c = shm.roundCost(r);
  EXPECT_NEAR(c.latency, (cp.shmAlphaUs + 6) * 1e-6, 1e-12);
  EXPECT_NEAR(c.bandwidth, 4096 / 12e9, 1e-12);
}

TEST(ModelTerms, ParseRoundTripAndErrors) {
  CostParams cp;
  ASSERT_TRUE(CostParams::parse("shmBigAlphaUs=3.5,shmEagerBytes=2048,tcpCacheGBps=4,"
                                "tuned.shm.4.98304=tree,tuned.shm.4.16=direct,tuned.tcp.8.1000=rd",
                                &cp)
                  .ok());
  EXPECT_DOUBLE_EQ(cp.shmBigAlphaUs, 3.5);
  EXPECT_DOUBLE_EQ(cp.shmEagerBytes, 2048);
  EXPECT_DOUBLE_EQ(cp.tcpCacheGBps, 4);
  EXPECT_EQ(cp.tunedAlgo(Transport::kShm, 4, 8), "direct");
  EXPECT_EQ(cp.tunedAlgo(Transport::kShm, 4, 17), "tree");
  EXPECT_EQ(cp.tunedAlgo(Transport::kShm, 4, 98304), "tree");
  EXPECT_EQ(cp.tunedAlgo(Transport::kShm, 4, 98305), "");  // above the last bucket: the model
  EXPECT_EQ(cp.tunedAlgo(Transport::kShm, 8, 8), "");
  EXPECT_EQ(cp.tunedAlgo(Transport::kTcp, 8, 1000), "rd");
  // "model": the bucket leaves the choice to the cost model.
  CostParams gaps;
  ASSERT_TRUE(CostParams::parse("tuned.tcp.8.16384=model,tuned.tcp.8.65536=rd", &gaps).ok());
  EXPECT_EQ(gaps.tunedAlgo(Transport::kTcp, 8, 8), "");
  EXPECT_EQ(gaps.tunedAlgo(Transport::kTcp, 8, 32768), "rd");
  CostParams back;
  ASSERT_TRUE(CostParams::parse(cp.toString(), &back).ok());
  EXPECT_EQ(back.toString(), cp.toString());
  for (const char* bad : {"tuned.ib.4.100=ring", "tuned.shm.x.100=ring", "tuned.shm.4=ring",
                          "tuned.shm.4.100=", "tuned.shm.4.100=Ring!", "shmCacheGBps=-1"}) {
    CostParams p;
    Status s = CostParams::parse(bad, &p);
    EXPECT_FALSE(s.ok()) << bad;
    const std::string key = std::string(bad).substr(0, std::string(bad).find('='));
    EXPECT_NE(s.message().find(key), std::string::npos) << s.message();
  }
}

// The direct path is a candidate the planner prices, shown by explain(); LOOM_ALGO still decides.
TEST(DirectCandidate, PricedShownAndOverridden) {
  PlannerContext ctx = context(4, true);
  ctx.directBytes = 32768;
  // A calibrated direct path that costs 1 us per peer: cheaper than any schedule at 8 B.
  ctx.params.fits["direct.shm"] = AlgoFit{0.5, 1.0, 0, 1};
  {
    Planner pl(ctx);
    const Decision& d = pl.choose(allreduce(8));
    EXPECT_TRUE(d.direct) << pl.explain(allreduce(8));
    EXPECT_EQ(d.describe(), "direct");
    EXPECT_NEAR(d.predictedSec, (0.5 + 3 * 1.0) * 1e-6 + pl.model().directTerms(8).transfer, 1e-9);
    EXPECT_NE(pl.explain(allreduce(8)).find("direct"), std::string::npos);
    // An operation merged into a group never gets it; above its size it is no candidate.
    EXPECT_FALSE(pl.choose(allreduce(8), /*allowDirect=*/false).direct);
    EXPECT_FALSE(pl.choose(allreduce(65536)).direct);
    // Its schedule: one step over the transport's one-host primitive, send buffer to receive.
    sched::Schedule s;
    ASSERT_TRUE(pl.build(d, allreduce(8), 2, &s).ok());
    EXPECT_EQ(s.algo, "direct");
    ASSERT_EQ(s.steps.size(), 1u);
    EXPECT_EQ(s.steps[0].op, sched::OpKind::kHostAllReduce);
    EXPECT_EQ(s.steps[0].bytes, 8u);
    EXPECT_EQ(s.rank, 2);
    // Barriers have it too (a message of nothing).
    sched::CollArgs barrier;
    barrier.coll = sched::CollType::kBarrier;
    EXPECT_TRUE(pl.choose(barrier).direct);
  }
  {  // Priced out: a direct path calibrated at 1 ms per peer loses to every schedule.
    PlannerContext slow = ctx;
    slow.params.fits["direct.shm"] = AlgoFit{0, 1000, 0, 1};
    Planner pl(slow);
    EXPECT_FALSE(pl.choose(allreduce(8)).direct);
  }
  {  // Forced away and forced onto it.
    PlannerContext forced = ctx;
    forced.algo = "allreduce:ring";
    EXPECT_STREQ(Planner(forced).choose(allreduce(8)).algo->name, "ring");
    forced.algo = "allreduce:direct";
    Planner pl(forced);
    EXPECT_TRUE(pl.choose(allreduce(8)).direct);
    EXPECT_EQ(pl.choose(allreduce(8)).source, "LOOM_ALGO");
    const Decision& big = pl.choose(allreduce(1 << 20));  // too large for it: the model decides
    EXPECT_FALSE(big.direct);
    EXPECT_NE(big.algo, nullptr);
  }
  {  // Not calibrated: the direct path keeps its rule (every size up to LOOM_SHM_DIRECT_BYTES).
    PlannerContext plain = ctx;
    plain.params.fits.clear();
    Planner pl(plain);
    EXPECT_TRUE(pl.choose(allreduce(32768)).direct);
  }
  {  // No direct path on the communicator (tcp, or LOOM_SHM_DIRECT_BYTES=0): never chosen.
    PlannerContext none = ctx;
    none.directBytes = 0;
    EXPECT_FALSE(Planner(none).choose(allreduce(8)).direct);
  }
}

// The tuning table picks the algorithm for the calibrated shape only; the model still picks the
// variant, and decides for every other shape and size.
TEST(TuningTable, HoldsOnlyForTheCalibratedShape) {
  CostParams cp;
  cp.tuned["shm.4"] = {{1024, "ring"}, {1 << 20, "tree"}};
  cp.tuned["tcp.4"] = {{1 << 20, "hier_tree"}};
  PlannerContext ctx = context(4, true);
  ctx.params = cp;
  Planner pl(ctx);
  EXPECT_STREQ(pl.choose(allreduce(8)).algo->name, "ring");
  EXPECT_EQ(pl.choose(allreduce(8)).source, "tuned");
  EXPECT_STREQ(pl.choose(allreduce(65536)).algo->name, "tree");
  EXPECT_NE(pl.explain(allreduce(65536)).find("tuned"), std::string::npos);
  EXPECT_EQ(pl.choose(allreduce(4 << 20)).source, "cost");  // beyond the table
  // Other rank counts, two hosts of two ranks, a fabric: the model.
  PlannerContext eight = context(8, true);
  eight.params = cp;
  EXPECT_EQ(Planner(eight).choose(allreduce(8)).source, "cost");
  PlannerContext mixed = context(4, true);
  mixed.hostOf = {0, 0, 1, 1};
  mixed.params = cp;
  EXPECT_EQ(Planner(mixed).choose(allreduce(8)).source, "cost");
  PlannerContext tcp = context(4, false);
  tcp.params = cp;
  EXPECT_STREQ(Planner(tcp).choose(allreduce(8)).algo->name, "hier_tree");
  tcp.interHost = Transport::kNet;  // an RDMA fabric was not calibrated
  EXPECT_EQ(Planner(tcp).choose(allreduce(8)).source, "cost");
  // Overrides win over the table; a tuned direct path needs the communicator to have one.
  PlannerContext forced = ctx;
  forced.tune = "allreduce:0-inf:rd";
  EXPECT_STREQ(Planner(forced).choose(allreduce(8)).algo->name, "rd");
  PlannerContext direct = ctx;
  direct.params.tuned["shm.4"] = {{1024, "direct"}};
  EXPECT_FALSE(Planner(direct).choose(allreduce(8)).direct);
  direct.directBytes = 32768;
  EXPECT_TRUE(Planner(direct).choose(allreduce(8)).direct);
  EXPECT_EQ(Planner(direct).choose(allreduce(8)).source, "tuned");
  // A table naming an algorithm this build does not have (an old file): the model decides.
  PlannerContext stale = ctx;
  stale.params.tuned["shm.4"] = {{1024, "nosuchalgo"}};
  Planner stalePlanner(stale);
  const Decision& d = stalePlanner.choose(allreduce(8));
  EXPECT_NE(d.algo, nullptr);
  EXPECT_EQ(d.source, "cost");
}

}  // namespace
}  // namespace loom::plan
