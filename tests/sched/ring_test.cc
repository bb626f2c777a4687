// The basic builders (ring, pairwise, dissemination, direct gather/scatter) are exact for p = 1..17
// and awkward counts, in place and out of place, in the in-memory checker.
#include <gtest/gtest.h>

#include "algo/registry.h"
#include "sched/checker.h"

namespace loom {
namespace {

using sched::CollArgs;
using sched::CollType;

struct Case {
  CollType coll;
  const char* algo;
};

class BasicAlgos : public ::testing::TestWithParam<Case> {};

TEST_P(BasicAlgos, ExactForManyRankCountsAndCounts) {
  const Case c = GetParam();
  const algo::AlgoInfo* info = algo::findAlgo(c.coll, c.algo);
  ASSERT_NE(info, nullptr);
  for (int p = 1; p <= 17; ++p) {
    for (uint64_t count :
         {0ull, 1ull, static_cast<unsigned long long>(p > 1 ? p - 1 : 1), 7ull, 1000ull}) {
      for (bool inPlace : {false, true}) {
        if (c.coll == CollType::kAllToAll && inPlace) continue;
        CollArgs a;
        a.coll = c.coll;
        a.count = count;
        a.dtype = DataType::kInt32;
        a.op = RedOp::kSum;
        a.root = p / 2;
        a.inPlace = inPlace;
        a.chunkBytes = 64;  // many pipeline loops even for small counts
        Status s = sched::checkCollective(info->build, a, p);
        ASSERT_TRUE(s.ok()) << s.toString() << " p=" << p << " count=" << count;
      }
    }
  }
}

TEST_P(BasicAlgos, LargeOddCountEveryDtype) {
  const Case c = GetParam();
  const algo::AlgoInfo* info = algo::findAlgo(c.coll, c.algo);
  ASSERT_NE(info, nullptr);
  for (int dt = 0; dt < kNumDataTypes; ++dt) {
    for (int op = 0; op < 4; ++op) {
      CollArgs a;
      a.coll = c.coll;
      a.count = c.coll == CollType::kAllReduce ? (1u << 20) + 3 : 4099;
      a.dtype = static_cast<DataType>(dt);
      a.op = static_cast<RedOp>(op);
      a.root = 1;
      a.chunkBytes = 1 << 16;
      Status s = sched::checkCollective(info->build, a, 5);
      ASSERT_TRUE(s.ok()) << s.toString();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ring, BasicAlgos,
    ::testing::Values(Case{CollType::kAllReduce, "ring"}, Case{CollType::kReduceScatter, "ring"},
                      Case{CollType::kAllGather, "ring"}, Case{CollType::kBroadcast, "ring"},
                      Case{CollType::kReduce, "ring"}, Case{CollType::kAllToAll, "pairwise"},
                      Case{CollType::kGather, "direct"}, Case{CollType::kScatter, "direct"}),
    [](const auto& info) { return std::string(sched::collName(info.param.coll)); });

TEST(Barrier, DisseminationCompletesForManyRankCounts) {
  for (int p = 1; p <= 17; ++p) {
    CollArgs a;
    a.coll = CollType::kBarrier;
    Status s =
        sched::checkCollective(algo::findAlgo(CollType::kBarrier, "dissemination")->build, a, p);
    ASSERT_TRUE(s.ok()) << s.toString();
  }
}

TEST(Checker, DetectsMissingDependency) {
  // A broken "ring" whose all-gather sends before the reduction finished must be caught.
  auto broken = [](const CollArgs& a, const sched::Group& g, sched::Schedule* out) {
    Status s = algo::buildAllReduceRing(a, g, out);
    for (auto& st : out->steps) st.depCount = 0;
    return s;
  };
  CollArgs a;
  a.count = 1000;
  a.dtype = DataType::kInt32;
  a.chunkBytes = 128;
  Status s = sched::checkCollective(broken, a, 4);
  EXPECT_FALSE(s.ok());
}

TEST(Checker, DetectsSizeMismatch) {
  auto broken = [](const CollArgs& a, const sched::Group& g, sched::Schedule* out) {
    Status s = algo::buildAllReduceRing(a, g, out);
    if (g.rank == 0)
      for (auto& st : out->steps)
        if (st.op == sched::OpKind::kSend) st.bytes -= 4;
    return s;
  };
  CollArgs a;
  a.count = 1000;
  a.dtype = DataType::kInt32;
  Status s = sched::checkCollective(broken, a, 3);
  EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace loom
