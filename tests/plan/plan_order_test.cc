// A forced rank ordering: LOOM_ALGO=allreduce:ring/rank or ring/topo (and the same in LOOM_TUNE)
// picks the algorithm AND the ordering, so a benchmark can run the naive rank-order ring against
// the topology-ordered one on the same job (perf/fabric-emu).
#include <gtest/gtest.h>

#include "plan/planner.h"
#include "topo/classify.h"
#include "topo/synth/synth.h"

namespace loom::plan {
namespace {

using sched::CollType;

TEST(OverridesOrder, ParsesOrderingAfterTheAlgorithm) {
  Overrides o;
  ASSERT_TRUE(
      parseOverrides("allreduce:ring/rank", "broadcast:0-1m:tree/topo,1m-inf:ring", &o).ok());
  std::string src, order;
  EXPECT_EQ(o.lookup(CollType::kAllReduce, 5, &src, &order), "ring");
  EXPECT_EQ(src, "LOOM_ALGO");
  EXPECT_EQ(order, "rank");
  EXPECT_EQ(o.lookup(CollType::kBroadcast, 10, &src, &order), "tree");
  EXPECT_EQ(src, "LOOM_TUNE");
  EXPECT_EQ(order, "topo");
  EXPECT_EQ(o.lookup(CollType::kBroadcast, 1 << 20, &src, &order), "ring");
  EXPECT_EQ(order, "");  // no ordering named: the planner chooses
  EXPECT_EQ(o.lookup(CollType::kAllGather, 1, &src, &order), "");
  EXPECT_EQ(order, "");
}

TEST(OverridesOrder, BadOrderingNamesTheVariableAndTheValue) {
  Overrides o;
  Status s = parseOverrides("allreduce:ring/zigzag", "", &o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("LOOM_ALGO"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("zigzag"), std::string::npos) << s.message();
  s = parseOverrides("", "allreduce:0-inf:/topo", &o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("LOOM_TUNE"), std::string::npos) << s.message();
}

// 8 hosts on 2 leaves with one uplink each (4:1), rank r on leaf r % 2 (a scattered job): the
// rank-order ring leaves the leaf on every hop, the topology-ordered ring once per direction.
PlannerContext scattered(const topo::Topology& t, const std::string& algo) {
  PlannerContext c;
  c.nranks = 8;
  for (int r = 0; r < 8; ++r) c.hostOf.push_back((r % 2) * 4 + r / 2);
  c.interHost = Transport::kNet;
  c.topology = &t;
  c.readEnv = false;
  c.algo = algo;
  c.params.reduceGBps = 500;  // GPU-class reduction: the links, not the CPU, decide
  return c;
}

TEST(OverridesOrder, PlannerObeysForcedOrdering) {
  topo::Topology t;
  ASSERT_TRUE(
      topo::synth::generateFromSpec("fat-tree:leavesPerPod=2,spinesPerPod=1,hostsPerLeaf=4", &t)
          .ok());
  topo::classify(&t);
  sched::CollArgs a;
  a.count = (16 << 20) / 4;
  Planner rankPl(scattered(t, "allreduce:ring/rank")), topoPl(scattered(t, "allreduce:ring/topo"));
  ASSERT_TRUE(rankPl.status().ok()) << rankPl.status().toString();
  const Decision& r = rankPl.choose(a);
  const Decision& o = topoPl.choose(a);
  EXPECT_STREQ(r.algo->name, "ring");
  EXPECT_STREQ(o.algo->name, "ring");
  EXPECT_TRUE(r.order.empty()) << r.describe();
  EXPECT_FALSE(o.order.empty()) << o.describe();
  EXPECT_EQ(r.source, "LOOM_ALGO");
  // 4 ring flows share each leaf's single uplink in rank order, 1 in topology order.
  EXPECT_GT(r.predictedSec, 3.0 * o.predictedSec) << rankPl.explain(a) << topoPl.explain(a);
  // Without an ordering the forced ring takes the cheaper one.
  Planner anyPl(scattered(t, "allreduce:ring"));
  EXPECT_FALSE(anyPl.choose(a).order.empty()) << anyPl.explain(a);
}

// Where topology order is rank order (a linear job), "topo" is not an error: rank order is it.
TEST(OverridesOrder, TopoOnLinearJobIsRankOrder) {
  PlannerContext c;
  c.nranks = 4;
  c.hostOf = {0, 0, 1, 1};
  c.readEnv = false;
  c.algo = "allreduce:ring/topo";
  Planner pl(c);
  sched::CollArgs a;
  a.count = 1 << 20;
  const Decision& d = pl.choose(a);
  ASSERT_NE(d.algo, nullptr);
  EXPECT_STREQ(d.algo->name, "ring");
}

}  // namespace
}  // namespace loom::plan
