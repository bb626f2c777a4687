// Every collective through the public API in real multi-process runs, over shm and tcp, for
// p in {1, 2, 3, 4, 5, 8}, in place and out of place, with inputs whose results are known exactly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "coll/coll_checks.h"
#include "coll/expect.h"
#include "harness/rank_harness.h"

namespace loom::testing {
namespace {

class Collectives : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(Collectives, EveryCollectiveExact) {
  auto [transport, p] = GetParam();
  RankOptions opt;
  opt.transport = transport;
  opt.killAfterMs = 240000;
  auto res = runRanks(
      p,
      [](int rank, int p, loomComm_t comm) {
        return everyCollective(comm, rank, p, {0, 1, 1000, 65536 + 3});
      },
      opt);
  EXPECT_EQ(failures(res), "");
}

INSTANTIATE_TEST_SUITE_P(Ranks, Collectives,
                         ::testing::Combine(::testing::Values("shm", "tcp"),
                                            ::testing::Values(1, 2, 3, 4, 5, 8)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_p" +
                                  std::to_string(std::get<1>(info.param));
                         });

TEST(Collectives, LargeAllReduceOverShmMatchesExactly) {
  auto res = runRanks(2, [](int rank, int p, loomComm_t comm) {
    return allReduce(comm, rank, p, (16u << 20) / 4 + 3, loomFloat32, loomSum, false);
  });
  EXPECT_EQ(failures(res), "");
}

TEST(Collectives, SplitMakesWorkingSubCommunicators) {
  auto res = runRanks(5, [](int rank, int p, loomComm_t comm) -> std::string {
    loomComm_t sub = nullptr;
    int color = rank % 2 == 0 ? 0 : 1;
    LOOM_TRY(loomCommSplit(comm, color, -rank, &sub, nullptr));
    int n = 0, me = -1;
    LOOM_TRY(loomCommCount(sub, &n));
    LOOM_TRY(loomCommUserRank(sub, &me));
    int want = color == 0 ? 3 : 2;
    if (n != want) return "split size " + std::to_string(n);
    // key = -rank: the highest old rank gets new rank 0.
    std::vector<int> members;
    for (int r = p - 1; r >= 0; --r)
      if (r % 2 == color) members.push_back(r);
    if (members[me] != rank) return "split rank order wrong";
    int v = rank, sum = 0;
    LOOM_TRY(loomAllReduce(&v, &sum, 1, loomInt32, loomSum, sub, nullptr));
    int want2 = 0;
    for (int r : members) want2 += r;
    LOOM_TRY(loomCommDestroy(sub));
    if (sum != want2) return "split allreduce " + std::to_string(sum);
    return "";
  });
  EXPECT_EQ(failures(res), "");
}

}  // namespace
}  // namespace loom::testing

namespace loom::testing {
namespace {

TEST(Collectives, NonBlockingInitReportsInProgressThenWorks) {
  auto res = runRanks(3, [](int rank, int p, loomComm_t comm) -> std::string {
    loomUniqueId id;
    if (rank == 0) LOOM_TRY(loomGetUniqueId(&id));
    LOOM_TRY(loomBroadcast(&id, &id, sizeof(id), loomUint8, 0, comm, nullptr));
    loomConfig_t cfg = LOOM_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    loomComm_t nb = nullptr;
    loomResult_t r = loomCommInitRankConfig(&nb, p, id, rank, &cfg);
    if (r != loomInProgress && r != loomSuccess) return "non-blocking init returned an error";
    loomResult_t state = loomInProgress;
    for (int i = 0; i < 20000 && state == loomInProgress; ++i) {
      LOOM_TRY(loomCommGetAsyncError(nb, &state));
      if (state == loomInProgress) usleep(500);
    }
    if (state != loomSuccess) return std::string("init ended with ") + loomGetErrorString(state);
    int v = rank + 1, s = 0;
    LOOM_TRY(loomAllReduce(&v, &s, 1, loomInt32, loomSum, nb, nullptr));
    LOOM_TRY(loomCommDestroy(nb));
    return s == p * (p + 1) / 2 ? "" : "wrong sum on the non-blocking communicator";
  });
  EXPECT_EQ(failures(res), "");
}

}  // namespace
}  // namespace loom::testing
