// Revoke from one rank reaches every rank (pending and later calls); a stopped rank is detected
// outside any collective; shrink with an explicit list and its argument checks; grow after a
// shrink brings a newcomer in and restores the size. Each new communicator passes every collective.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstring>

#include "coll/membership_util.h"
#include "harness/rank_harness.h"

namespace loom::testing {
namespace {

using Clock = std::chrono::steady_clock;

class Membership : public ::testing::TestWithParam<std::string> {};

TEST_P(Membership, RevokeReachesEveryRankAndShrinkKeepsEveryone) {
  RankOptions opt;
  opt.transport = GetParam();
  auto res = runRanks(
      4,
      [](int rank, int p, loomComm_t comm) -> std::string {
        std::vector<float> buf(1 << 16, 1.0f);
        auto t0 = Clock::now();
        loomResult_t r;
        if (rank == 1) {
          // Never joins the all-reduce the others are blocked in; revokes instead.
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
          if (loomCommRevoke(comm) != loomSuccess) return "revoke failed";
          r = loomAllReduce(buf.data(), buf.data(), buf.size(), loomFloat32, loomSum, comm,
                            nullptr);
        } else {
          r = loomAllReduce(buf.data(), buf.data(), buf.size(), loomFloat32, loomSum, comm,
                            nullptr);
        }
        const double s = secondsSince(t0);
        std::string msg = loomGetLastError(comm);
        if (r != loomCommRevoked)
          return std::string("expected loomCommRevoked, got ") + loomGetErrorString(r) + ": " + msg;
        if (rank != 1 && msg.find("revoked by rank ") == std::string::npos)
          return "message does not say who revoked (rank 1, or a rank that passed it on): " + msg;
        if (s > 5) return "revoke took " + std::to_string(s) + " s to arrive";
        loomResult_t async = loomSuccess;
        loomCommGetAsyncError(comm, &async);
        if (async != loomCommRevoked) return std::string("async: ") + loomGetErrorString(async);
        if (loomBarrier(comm, nullptr) != loomCommRevoked) return "a later barrier was not refused";
        std::string e = failedRanksAre(comm, {}, /*agree=*/true);
        if (!e.empty()) return e;
        loomComm_t same = nullptr;
        if (loomCommShrink(comm, nullptr, 0, &same) != loomSuccess)
          return std::string("shrink: ") + loomGetLastError(comm);
        int n = 0, me = -1;
        loomCommCount(same, &n);
        loomCommUserRank(same, &me);
        if (n != p || me != rank) return "shrink without failures renumbered ranks";
        e = everyCollective(same, me, n);
        loomCommDestroy(same);
        return e;
      },
      opt);
  EXPECT_EQ(failures(res), "");
}

TEST_P(Membership, StoppedRankIsDetectedOutsideCollectives) {
  SharedPage* page = SharedPage::make();
  ASSERT_NE(page, nullptr);
  RankOptions opt;
  opt.transport = GetParam();
  auto res = runRanks(
      4,
      [page](int rank, int p, loomComm_t comm) -> std::string {
        page->pid[rank] = getpid();
        if (loomBarrier(comm, nullptr) != loomSuccess) return "barrier";
        if (rank == 3) {
          raise(SIGSTOP);
          // Resumed: it learns it was excluded, and blames nobody else.
          loomResult_t async = loomSuccess;
          for (int i = 0; i < 400 && async == loomSuccess; ++i) {
            loomCommGetAsyncError(comm, &async);
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
          }
          if (async != loomCommRevoked) return std::string("resumed: ") + loomGetErrorString(async);
          return failedRanksAre(comm, {3}, false);
        }
        auto t0 = Clock::now();
        loomResult_t async = loomSuccess;
        while (async == loomSuccess && secondsSince(t0) < 20) {
          loomCommGetAsyncError(comm, &async);
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        const double s = secondsSince(t0);
        if (async != loomRemoteError) return std::string("async: ") + loomGetErrorString(async);
        if (s > 8) return "detected after " + std::to_string(s) + " s";
        std::string e = failedRanksAre(comm, {3}, true);
        // Nobody destroys the communicator (which the others would see as leaving) before all
        // agreed.
        page->flag[0]++;
        while (page->flag[0].load() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        if (rank == 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          kill(page->pid[3].load(), SIGCONT);
        }
        return e;
      },
      opt);
  EXPECT_EQ(failures(res), "");
  munmap(page, sizeof(SharedPage));
}

TEST_P(Membership, ExplicitShrinkAndItsArgumentChecks) {
  RankOptions opt;
  opt.transport = GetParam();
  auto res = runRanks(
      4,
      [](int rank, int p, loomComm_t comm) -> std::string {
        if (rank == 2) return "";  // left out; it never calls shrink
        loomComm_t nc = nullptr;
        int self = rank, bad = 9, dup[2] = {2, 2};
        if (loomCommShrink(comm, &self, 1, &nc) != loomInvalidArgument) return "self accepted";
        if (loomCommShrink(comm, &bad, 1, &nc) != loomInvalidArgument) return "rank 9 accepted";
        if (loomCommShrink(comm, dup, 2, &nc) != loomInvalidArgument) return "duplicate accepted";
        if (loomCommShrink(comm, nullptr, 1, &nc) != loomInvalidArgument) return "NULL accepted";
        if (loomCommShrink(comm, dup, 1, nullptr) != loomInvalidArgument)
          return "NULL out accepted";
        if (loomCommShrink(comm, dup, 1, &nc) != loomSuccess)
          return std::string("shrink: ") + loomGetLastError(comm);
        int n = 0, me = -1;
        loomCommCount(nc, &n);
        loomCommUserRank(nc, &me);
        if (n != 3 || me != (rank < 2 ? rank : rank - 1)) return "wrong numbering";
        std::string e = everyCollective(nc, me, n);
        loomCommDestroy(nc);
        return e;
      },
      opt);
  EXPECT_EQ(failures(res), "");
}

// Rank 3 is killed; the survivors shrink to 3, then grow back to 4 with a newcomer that was
// started separately and gets the id rank 0 publishes through a pipe.
TEST_P(Membership, GrowAfterShrinkRestoresTheSize) {
  int idPipe[2], repPipe[2];
  ASSERT_EQ(pipe(idPipe), 0);
  ASSERT_EQ(pipe(repPipe), 0);
  const std::string transport = GetParam();
  pid_t newcomer = fork();
  if (newcomer == 0) {
    loomUniqueId id;
    std::string e;
    if (read(idPipe[0], &id, sizeof(id)) != sizeof(id)) _exit(3);
    loomConfig_t cfg = LOOM_CONFIG_INITIALIZER;
    cfg.transport = transport.c_str();
    cfg.timeoutMs = 60000;
    loomComm_t c = nullptr;
    if (loomCommInitRankConfig(&c, 4, id, 3, &cfg) != loomSuccess)
      e = std::string("newcomer init: ") + loomGetLastError(nullptr);
    else
      e = everyCollective(c, 3, 4);
    if (c) loomCommDestroy(c);
    if (write(repPipe[1], e.data(), e.size()) < 0) _exit(4);
    _exit(e.empty() ? 0 : 1);
  }
  close(repPipe[1]);
  RankOptions opt;
  opt.transport = transport;
  auto res = runRanks(
      4,
      [&](int rank, int p, loomComm_t comm) -> std::string {
        if (rank == 3) raise(SIGKILL);
        double s = 0;
        loomResult_t r = allReduceUntilError(comm, 1024, 100000, Clock::now(), &s);
        if (r != loomRemoteError) return std::string("expected failure: ") + loomGetErrorString(r);
        loomComm_t small = nullptr, big = nullptr;
        if (loomCommShrink(comm, nullptr, 0, &small) != loomSuccess)
          return std::string("shrink: ") + loomGetLastError(comm);
        loomUniqueId id;
        if (rank == 0) {
          if (loomGetUniqueId(&id) != loomSuccess) return "id";
          if (write(idPipe[1], &id, sizeof(id)) != sizeof(id)) return "publish";
        }
        if (loomCommGrow(small, 4, rank == 0 ? &id : nullptr, &big) != loomSuccess)
          return std::string("grow: ") + loomGetLastError(small);
        int n = 0, me = -1;
        loomCommCount(big, &n);
        loomCommUserRank(big, &me);
        std::string e = n == 4 && me == rank ? everyCollective(big, me, n) : "grown numbering";
        loomCommDestroy(big);
        loomCommDestroy(small);
        return e;
      },
      opt);
  res[3] = RankResult{0, 0, ""};
  EXPECT_EQ(failures(res), "");
  close(idPipe[1]);  // a newcomer still waiting for the id gives up
  int status = 0;
  waitpid(newcomer, &status, 0);
  char buf[2048] = {0};
  ssize_t k = read(repPipe[0], buf, sizeof(buf) - 1);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << (k > 0 ? buf : "newcomer failed");
  close(repPipe[0]);
  close(idPipe[0]);
}

INSTANTIATE_TEST_SUITE_P(Transports, Membership, ::testing::Values("shm", "tcp"));

}  // namespace
}  // namespace loom::testing
