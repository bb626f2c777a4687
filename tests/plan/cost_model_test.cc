// Cost model: contention on shared uplinks and global links, the rounds of real schedules, and
// the analytic patterns agreeing with the rounds of the real schedules.
#include "plan/cost_model.h"

#include <gtest/gtest.h>

#include "algo/registry.h"
#include "plan/ordering.h"
#include "plan/patterns.h"
#include "topo/classify.h"
#include "topo/synth/synth.h"

namespace loom::plan {
namespace {

topo::Topology fatTree(int leaves, int spines, int hostsPerLeaf) {
  topo::synth::FatTreeParams p;
  p.levels = 2;
  p.leavesPerPod = leaves;
  p.spinesPerPod = spines;
  p.hostsPerLeaf = hostsPerLeaf;
  topo::Topology t;
  Status s = topo::synth::generateFatTree(p, &t);
  EXPECT_TRUE(s.ok()) << s.toString();
  topo::classify(&t);
  return t;
}

Placement onePerHost(const topo::Topology& t, int p) {
  Placement pl;
  pl.nranks = p;
  for (int r = 0; r < p; ++r) pl.hostOf.push_back(r);
  pl.interHost = Transport::kNet;
  pl.topology = &t;
  return pl;
}

TEST(CostModel, PathClassesFollowTheFabric) {
  topo::Topology t = fatTree(4, 2, 4);  // 16 hosts, hosts 4k..4k+3 on leaf k (generator order)
  CostModel m(onePerHost(t, 16), CostParams());
  EXPECT_EQ(m.pathKind(0, 1), PathKind::kLeaf);
  EXPECT_EQ(m.pathKind(0, 4), PathKind::kSpine);
  EXPECT_LT(m.alpha(0, 1), m.alpha(0, 4));
}

// 4 hosts of leaf 0 each send to a host of leaf 1: 4 flows share leaf 0's 2 uplinks (2:1), so the
// round takes twice as long as one flow alone; inside the leaf there is no such penalty.
TEST(CostModel, OversubscribedUplinkIsTheBottleneck) {
  topo::Topology t = fatTree(4, 2, 4);
  CostModel m(onePerHost(t, 16), CostParams());
  const uint64_t b = 1 << 24;
  Round one{{{0, 4, b}}, 1, 0};
  Round four{{{0, 4, b}, {1, 5, b}, {2, 6, b}, {3, 7, b}}, 1, 0};
  Round local{{{0, 1, b}, {1, 2, b}, {2, 3, b}, {3, 0, b}}, 1, 0};
  double t1 = m.roundCost(one).bandwidth, t4 = m.roundCost(four).bandwidth;
  EXPECT_NEAR(t4 / t1, 2.0, 0.01);
  EXPECT_NE(m.roundCost(four).bottleneck.find("uplinks"), std::string::npos);
  EXPECT_NEAR(m.roundCost(local).bandwidth / t1, 1.0, 0.01);
}

TEST(CostModel, DragonflyGlobalLinksAreShared) {
  topo::synth::DragonflyParams dp;
  dp.groups = 4;
  dp.leavesPerGroup = 2;
  dp.spinesPerGroup = 2;
  dp.hostsPerLeaf = 4;
  dp.globalLinksPerSpine = 3;  // 6 per group, 2 per group pair
  topo::Topology t;
  ASSERT_TRUE(topo::synth::generateDragonfly(dp, &t).ok());
  topo::classify(&t);
  CostModel m(onePerHost(t, 32), CostParams());
  const int g0 = m.groupOfRank(0);
  std::vector<int> sameGroup, otherGroup;
  for (int r = 0; r < 32; ++r) (m.groupOfRank(r) == g0 ? sameGroup : otherGroup).push_back(r);
  ASSERT_EQ(sameGroup.size(), 8u);
  // All 8 hosts of group 0 send to 8 hosts of one other group: 2 global links carry 8 flows.
  int g1 = m.groupOfRank(otherGroup[0]);
  std::vector<int> dst;
  for (int r : otherGroup)
    if (m.groupOfRank(r) == g1) dst.push_back(r);
  Round far, one;
  for (int i = 0; i < 8; ++i) far.flows.push_back({sameGroup[i], dst[i], 1 << 24});
  one.flows.push_back({sameGroup[0], dst[0], 1 << 24});
  EXPECT_EQ(m.pathKind(sameGroup[0], dst[0]), PathKind::kGlobal);
  EXPECT_NEAR(m.roundCost(far).bandwidth / m.roundCost(one).bandwidth, 4.0, 0.01);
  EXPECT_NE(m.roundCost(far).bottleneck.find("global"), std::string::npos);
}

// The analytic patterns used above kExactMaxRanks follow the real schedules' rounds.
TEST(CostModel, PatternsAgreeWithSchedules) {
  topo::Topology t = fatTree(4, 2, 4);
  const std::pair<sched::CollType, const char*> algos[] = {
      {sched::CollType::kAllReduce, "ring"},      {sched::CollType::kAllReduce, "tree"},
      {sched::CollType::kAllReduce, "rd"},        {sched::CollType::kAllReduce, "rabenseifner"},
      {sched::CollType::kAllReduce, "hier"},      {sched::CollType::kAllReduce, "hier_tree"},
      {sched::CollType::kBroadcast, "ring"},      {sched::CollType::kBroadcast, "binomial"},
      {sched::CollType::kBroadcast, "tree"},      {sched::CollType::kReduce, "binomial"},
      {sched::CollType::kReduce, "tree"},         {sched::CollType::kReduceScatter, "halving"},
      {sched::CollType::kAllGather, "rd"},        {sched::CollType::kReduceScatter, "ring"},
      {sched::CollType::kAllReduce, "ring_rail"},
  };
  for (auto [coll, name] : algos) {
    const algo::AlgoInfo* a = algo::findAlgo(coll, name);
    ASSERT_NE(a, nullptr) << name;
    for (int p : {8, 12, 16}) {
      for (uint64_t count : {uint64_t{16}, uint64_t{1} << 18, uint64_t{1} << 22}) {
        sched::CollArgs args;
        args.coll = coll;
        args.count = count;
        if (coll == sched::CollType::kReduceScatter || coll == sched::CollType::kAllGather)
          args.count /= p;
        std::vector<int> parts(p);
        for (int r = 0; r < p; ++r) parts[r] = r / 4;
        std::vector<sched::Schedule> all(p);
        for (int r = 0; r < p; ++r) ASSERT_TRUE(a->build(args, {r, p, parts}, &all[r]).ok());
        std::vector<Round> exact, pattern;
        ASSERT_TRUE(roundsFromSchedules(all, &exact).ok());
        PatternArgs pa;
        pa.args = args;
        pa.nranks = p;
        pa.parts = parts;
        ASSERT_TRUE(patternRounds(name, pa, &pattern).ok());
        CostModel mp(onePerHost(t, p), CostParams());
        double e = mp.price(exact), q = mp.price(pattern);
        // Rooted trees: the schedules' rounds charge a rank's sends of one level one after the
        // other, the pattern one tree level per round; the true time lies between the two.
        const bool rooted = coll == sched::CollType::kBroadcast || coll == sched::CollType::kReduce;
        EXPECT_NEAR(q / e, rooted ? 0.9 : 1.0, rooted ? 0.5 : 0.3)
            << sched::collName(coll) << ":" << name << " p=" << p << " count=" << count << " exact "
            << e * 1e6 << " us, pattern " << q * 1e6 << " us";
      }
    }
  }
}

TEST(CostModel, ParamsParse) {
  CostParams p;
  ASSERT_TRUE(CostParams::parse("shmAlphaUs=3.5,tcpGBps=0.9", &p).ok());
  EXPECT_DOUBLE_EQ(p.shmAlphaUs, 3.5);
  EXPECT_DOUBLE_EQ(p.tcpGBps, 0.9);
  ASSERT_TRUE(CostParams::parse("{\"netGBps\": 50}", &p).ok());
  EXPECT_DOUBLE_EQ(p.netGBps, 50);
  EXPECT_FALSE(CostParams::parse("bogus=1", &p).ok());
  CostParams back;
  ASSERT_TRUE(CostParams::parse(p.toString(), &back).ok());
  EXPECT_EQ(back.toString(), p.toString());
}

// The calibration's terms: cores, and per algorithm and transport a base, a per-round cost and a
// bandwidth efficiency; they survive the round trip through the params file, and malformed ones
// are errors naming the key.
TEST(CostModel, FitParamsParse) {
  CostParams p;
  ASSERT_TRUE(CostParams::parse("cores=2,fit.ring.shm.baseUs=3,fit.ring.shm.roundUs=0,"
                                "fit.ring.shm.bwEff=0.5,fit.rd.tcp.roundUs=7",
                                &p)
                  .ok());
  EXPECT_DOUBLE_EQ(p.cores, 2);
  ASSERT_NE(p.fit("ring", Transport::kShm), nullptr);
  EXPECT_DOUBLE_EQ(p.fit("ring", Transport::kShm)->baseUs, 3);
  EXPECT_DOUBLE_EQ(p.fit("ring", Transport::kShm)->bwEff, 0.5);
  EXPECT_DOUBLE_EQ(p.fit("rd", Transport::kTcp)->roundUs, 7);
  EXPECT_DOUBLE_EQ(p.fit("rd", Transport::kTcp)->bwEff, 1);  // unset: the identity
  EXPECT_EQ(p.fit("ring", Transport::kTcp), nullptr);
  ASSERT_TRUE(CostParams::parse("fit.tree.shm.roundUs=-1.5", &p).ok());  // takes back some alpha
  EXPECT_DOUBLE_EQ(p.fit("tree", Transport::kShm)->roundUs, -1.5);
  CostParams back;
  ASSERT_TRUE(CostParams::parse(p.toString(), &back).ok());
  EXPECT_EQ(back.toString(), p.toString());
  for (const char* bad :
       {"fit.ring.baseUs=1", "fit.ring.shm.speed=1", "fit.ring.shm.bwEff=0",
        "fit.ring.shm.baseUs=-1", "cores=-2", "shmAlphaCpu=1.5", "tcpAlphaCpu=-0.5"}) {
    Status s = CostParams::parse(bad, &p);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find(std::string(bad).substr(0, std::string(bad).find('='))),
              std::string::npos)
        << s.message();
  }
}

Placement oneHost(int p) {
  Placement pl;
  pl.nranks = p;
  pl.hostOf.assign(p, 0);
  return pl;
}

// A pipelined algorithm reduces chunk k while chunk k+1 is in flight: its round costs the larger of
// transfer and reduction; a step that must reduce before it sends on pays both.
TEST(CostModel, PipelinedRoundsOverlapTheReduction) {
  CostParams cp;
  cp.shmGBps = 2;
  cp.hostMemGBps = 100;
  cp.reduceGBps = 4;
  CostModel m(oneHost(2), cp);
  const uint64_t b = 1 << 20;
  Round r{{{0, 1, b}, {1, 0, b}}, 1, b};
  const RoundCost c = m.roundCost(r);
  EXPECT_NEAR(c.bandwidth, b / 2e9, 1e-12);
  EXPECT_NEAR(c.compute, b / 4e9, 1e-12);
  PriceOpts piped;
  piped.pipelined = true;
  EXPECT_NEAR(m.price({r}), c.latency + c.bandwidth + c.compute, 1e-12);
  EXPECT_NEAR(m.price({r}, nullptr, piped), c.latency + c.bandwidth, 1e-12);
}

// Pipelining overlaps a chunk's reduction with the next chunk's copy only while a core is free
// to do it. 4 ranks on 2 cores keep both cores busy with copies and reductions alike, so a
// pipelined round costs all the round's CPU work over the cores, as a non-pipelined one does; 4
// ranks with a core each (cores = 0) still overlap.
TEST(CostModel, OversubscribedCoresLeaveNothingToOverlap) {
  CostParams cp;
  cp.shmGBps = 2;
  cp.hostMemGBps = 100;
  cp.reduceGBps = 4;
  const uint64_t b = 1 << 20;
  std::vector<Flow> ring;
  for (int r = 0; r < 4; ++r) ring.push_back({r, (r + 1) % 4, b});
  const Round round{ring, 1, b, 4 * b};
  PriceOpts piped;
  piped.pipelined = true;
  const CostModel own(oneHost(4), cp);
  const RoundCost o = own.roundCost(round);
  EXPECT_NEAR(own.price({round}, nullptr, piped), o.latency + std::max(o.bandwidth, o.compute),
              1e-12);
  EXPECT_LT(own.price({round}, nullptr, piped), own.price({round}));
  cp.cores = 2;
  const CostModel shared(oneHost(4), cp);
  const RoundCost c = shared.roundCost(round);
  const double work = 4 * (b / 2e9 + b / 4e9) / 2;  // every rank's copy and reduction, 2 cores
  EXPECT_NEAR(c.cpuBusy, work, 1e-12);
  EXPECT_NEAR(shared.price({round}, nullptr, piped), c.latency + work, 1e-12);
  EXPECT_NEAR(shared.price({round}, nullptr, piped), shared.price({round}), 1e-12);
}

// shm's single-copy protocol: messages from shmCmaBytes on move at shmCmaGBps and cost host
// memory once, smaller ones go through the copy ring at shmGBps; without shmCmaGBps all do.
TEST(CostModel, ShmSingleCopyPricedApart) {
  CostParams cp;
  cp.shmGBps = 2;
  cp.hostMemGBps = 1000;
  cp.shmCmaGBps = 8;
  cp.shmCmaBytes = 65536;
  CostModel m(oneHost(2), cp);
  EXPECT_DOUBLE_EQ(m.flowGBps(0, 1, 1 << 20), 8);
  EXPECT_DOUBLE_EQ(m.flowGBps(0, 1, 32 << 10), 2);
  EXPECT_NEAR(m.roundCost(Round{{{0, 1, 1 << 20}}, 1, 0}).bandwidth, (1 << 20) / 8e9, 1e-12);
  cp.shmCmaGBps = 0;
  EXPECT_DOUBLE_EQ(CostModel(oneHost(2), cp).flowGBps(0, 1, 1 << 20), 2);
}

// Whether data moves at the cache rate depends on what the ranks of a machine hold, not on how
// the algorithm cuts it: with the footprint key, a 32 KiB chunk of a 64 MiB all-reduce on 4 ranks
// moves at the memory rate and a 128 KiB message of a 512 KiB all-reduce at the cache rate (4 x
// 512 KiB <= 4 MiB); keyed by the message, the other way round.
TEST(CostModel, CacheRateFollowsTheFootprintOfTheCollective) {
  CostParams cp;
  cp.shmGBps = 2, cp.shmCacheGBps = 8, cp.shmCacheBytes = 4 << 20;
  cp.tcpGBps = 1, cp.tcpCacheGBps = 3, cp.tcpCacheBytes = 4 << 20;
  const uint64_t chunk = 32 << 10, big = 64 << 20, mid = 128 << 10, vec = 512 << 10;
  EXPECT_DOUBLE_EQ(CostModel(oneHost(4), cp).flowGBps(0, 1, chunk, big), 8);
  EXPECT_DOUBLE_EQ(CostModel(oneHost(4), cp).flowGBps(0, 1, 8 << 20, vec), 2);
  cp.shmCacheFootprint = cp.tcpCacheFootprint = 1;
  const CostModel shm(oneHost(4), cp);
  EXPECT_DOUBLE_EQ(shm.flowGBps(0, 1, chunk, big), 2);
  EXPECT_DOUBLE_EQ(shm.flowGBps(0, 1, mid, vec), 8);
  EXPECT_DOUBLE_EQ(shm.flowGBps(0, 1, mid, 2 << 20), 2);  // 4 ranks x 2 MiB > 4 MiB
  EXPECT_DOUBLE_EQ(shm.flowGBps(0, 1, mid), 8);           // collective unknown: the message
  const Round r{{{0, 1, chunk}}, 1, 0};
  EXPECT_NEAR(shm.roundCost(r, big).bandwidth, chunk / 2e9, 1e-12);
  // Over tcp the ranks share the machine's caches when they share its cores.
  Placement tcp = oneHost(4);
  tcp.hostOf = {0, 1, 2, 3};
  tcp.interHost = Transport::kTcp;
  EXPECT_DOUBLE_EQ(CostModel(tcp, cp).flowGBps(0, 1, mid, 2 << 20), 3);
  cp.cores = 2;
  EXPECT_DOUBLE_EQ(CostModel(tcp, cp).flowGBps(0, 1, mid, 2 << 20), 1);
}

// 8 ranks on one host with 2 cores: the round's 8 message latencies, copies and reductions are CPU
// work spread over 2 cores, so a round in which every rank sends costs 4 alphas, not 1.
TEST(CostModel, CoresSerialiseTheRanksOfARound) {
  CostParams cp;
  cp.hostMemGBps = 1000;
  std::vector<Flow> ring;
  for (int r = 0; r < 8; ++r) ring.push_back({r, (r + 1) % 8, 1 << 20});
  Round round{ring, 1, 1 << 20, 8 << 20};
  RoundCost free = CostModel(oneHost(8), cp).roundCost(round);
  cp.cores = 2;
  RoundCost shared = CostModel(oneHost(8), cp).roundCost(round);
  EXPECT_NEAR(free.latency, cp.shmAlphaUs * 1e-6, 1e-12);
  EXPECT_NEAR(shared.latency, 4 * cp.shmAlphaUs * 1e-6, 1e-12);
  EXPECT_NEAR(shared.bandwidth, 4 * free.bandwidth, 1e-12);
  EXPECT_NEAR(shared.compute, 4 * free.compute, 1e-12);
  EXPECT_EQ(shared.activeRanks, 8);
  EXPECT_NE(shared.bottleneck.find("cpu"), std::string::npos);
}

// The CPU share of the latency (shmAlphaCpu / tcpAlphaCpu): 0 makes a message's latency waiting
// that overlaps the other ranks' work, as the simulator models it, so the round of 8 ranks on 2
// cores costs one alpha of latency (its copies and reductions still share the cores); each
// transport's share applies to its own messages only.
TEST(CostModel, LatencyAsWaitingIsNotSpreadOverTheCores) {
  CostParams cp;
  cp.hostMemGBps = 1000;
  cp.cores = 2;
  std::vector<Flow> ring;
  for (int r = 0; r < 8; ++r) ring.push_back({r, (r + 1) % 8, 1 << 20});
  const Round round{ring, 1, 1 << 20, 8 << 20};
  const RoundCost cpu = CostModel(oneHost(8), cp).roundCost(round);
  cp.tcpAlphaCpu = 0;  // not shm's: unchanged
  EXPECT_NEAR(CostModel(oneHost(8), cp).roundCost(round).latency, 4 * cp.shmAlphaUs * 1e-6, 1e-12);
  cp.shmAlphaCpu = 0.5;
  EXPECT_NEAR(CostModel(oneHost(8), cp).roundCost(round).latency, 2 * cp.shmAlphaUs * 1e-6, 1e-12);
  cp.shmAlphaCpu = 0;
  const RoundCost wait = CostModel(oneHost(8), cp).roundCost(round);
  EXPECT_NEAR(wait.latency, cp.shmAlphaUs * 1e-6, 1e-12);
  EXPECT_NEAR(wait.bandwidth, cpu.bandwidth, 1e-12);
  EXPECT_NEAR(wait.compute, cpu.compute, 1e-12);
  // Over tcp, one rank per host on one machine's cores: tcpAlphaCpu.
  Placement tcp = oneHost(8);
  for (int r = 0; r < 8; ++r) tcp.hostOf[r] = r;
  tcp.interHost = Transport::kTcp;
  EXPECT_NEAR(CostModel(tcp, cp).roundCost(round).latency, cp.tcpAlphaUs * 1e-6, 1e-12);
  cp.tcpAlphaCpu = 1;
  EXPECT_NEAR(CostModel(tcp, cp).roundCost(round).latency, 4 * cp.tcpAlphaUs * 1e-6, 1e-12);
}

// The fit of (algorithm, transport) is added on top of the model: base once, roundUs per round,
// wakeUs per round and unit of the cores' oversubscription beyond 1, and the transfer divided by
// bwEff; the transport is shm for
// a one-host communicator and the inter-host transport otherwise, and other algorithms are
// untouched.
TEST(CostModel, AlgoFitIsAppliedPerAlgorithmAndTransport) {
  CostParams cp;
  cp.cores = 2;
  ASSERT_TRUE(CostParams::parse("fit.ring.shm.baseUs=10,fit.ring.shm.roundUs=2,"
                                "fit.ring.shm.wakeUs=5,fit.ring.shm.bwEff=0.5",
                                &cp)
                  .ok());
  CostModel m(oneHost(4), cp);
  EXPECT_EQ(m.fitTransport(), Transport::kShm);
  std::vector<Flow> f;
  for (int r = 0; r < 4; ++r) f.push_back({r, (r + 1) % 4, 1 << 16});
  const std::vector<Round> rounds = {Round{f, 3, 0}};
  const CostModel::Terms t = m.terms(rounds, false);
  EXPECT_DOUBLE_EQ(t.rounds, 3);
  EXPECT_DOUBLE_EQ(t.wakes, 3 * (4 / 2.0 - 1));  // 4 active ranks on 2 cores, 3 times
  PriceOpts ring;
  ring.algo = "ring";
  EXPECT_NEAR(m.price(rounds, nullptr, ring),
              10e-6 + t.fixed + 2e-6 * t.rounds + 5e-6 * t.wakes + t.transfer / 0.5, 1e-12);
  PriceOpts rd;
  rd.algo = "rd";
  EXPECT_NEAR(m.price(rounds, nullptr, rd), t.fixed + t.transfer, 1e-12);
  Placement two = oneHost(4);
  two.hostOf = {0, 0, 1, 1};
  CostModel overTcp(two, cp);
  EXPECT_EQ(overTcp.fitTransport(), Transport::kTcp);
  EXPECT_EQ(overTcp.price(rounds, nullptr, ring), overTcp.price(rounds));
}

}  // namespace
}  // namespace loom::plan
