// Every registered algorithm, forced with LOOM_ALGO, is exact in real multi-process runs over shm
// and tcp for p in {2, 3, 4, 5, 8}, in place and out of place, with counts not divisible by p.
#include <gtest/gtest.h>

#include "algo/registry.h"
#include "coll/coll_checks.h"
#include "harness/rank_harness.h"

namespace loom::testing {
namespace {

using sched::CollType;

std::string runColl(CollType coll, loomComm_t comm, int rank, int p) {
  for (uint64_t n : {1ull, 1000ull, 65536ull * 3 + 7}) {
    for (bool inPlace : {false, true}) {
      std::string e;
      switch (coll) {
        case CollType::kAllReduce:
          e = allReduce(comm, rank, p, n, loomFloat32, loomSum, inPlace);
          if (e.empty()) e = allReduce(comm, rank, p, n, loomInt32, loomMax, inPlace);
          break;
        case CollType::kBroadcast:
          e = broadcast(comm, rank, p, n, inPlace);
          break;
        case CollType::kReduce:
          e = reduce(comm, rank, p, n, inPlace);
          break;
        case CollType::kAllGather:
          e = allGather(comm, rank, p, n, inPlace);
          break;
        case CollType::kReduceScatter:
          e = reduceScatter(comm, rank, p, n, inPlace);
          break;
        case CollType::kAllToAll:
          e = inPlace ? "" : allToAll(comm, rank, p, n);
          break;
        default:
          break;
      }
      if (!e.empty()) return e + " (n=" + std::to_string(n) + (inPlace ? ", in place)" : ")");
    }
  }
  return "";
}

struct Param {
  CollType coll;
  std::string algo;
  std::string transport;
};

class ForcedAlgo : public ::testing::TestWithParam<Param> {};

TEST_P(ForcedAlgo, ExactForRankCounts) {
  const Param prm = GetParam();
  for (int p : {2, 3, 4, 5, 8}) {
    RankOptions opt;
    opt.transport = prm.transport;
    opt.env = {{"LOOM_ALGO", std::string(sched::collName(prm.coll)) + ":" + prm.algo}};
    const CollType coll = prm.coll;
    auto res = runRanks(
        p, [coll](int rank, int np, loomComm_t comm) { return runColl(coll, comm, rank, np); },
        opt);
    ASSERT_EQ(failures(res), "") << "p=" << p;
  }
}

std::vector<Param> params() {
  std::vector<Param> out;
  for (const auto& a : algo::registry()) {
    // Send/recv and barrier have tests of their own, and so have "direct" (direct_forced_test)
    // and the one-builder gather, scatter and all-to-all-v (gather_scatter_test).
    if (a.coll == CollType::kSend || a.coll == CollType::kRecv || a.coll == CollType::kBarrier ||
        a.coll == CollType::kGather || a.coll == CollType::kScatter ||
        a.coll == CollType::kAllToAllv || a.host)
      continue;
    for (const char* t : {"shm", "tcp"}) out.push_back({a.coll, a.name, t});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Registry, ForcedAlgo, ::testing::ValuesIn(params()), [](const auto& info) {
  return std::string(sched::collName(info.param.coll)) + "_" + info.param.algo + "_" +
         info.param.transport;
});

}  // namespace
}  // namespace loom::testing
