// Faults: a SIGKILLed rank, an abort from another thread, and a peer that never joins the
// operation. Each test asserts the error arrives in time, names the rank, and nothing is left in
// /dev/shm.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "coll/membership_util.h"
#include "harness/rank_harness.h"
#include "transports/policy.h"

namespace loom::testing {
namespace {

using Clock = std::chrono::steady_clock;

class Faults : public ::testing::TestWithParam<std::string> {};

TEST_P(Faults, KilledRankIsNamedByEverySurvivor) {
  const std::set<std::string> before = loomShmSegments();
  RankOptions opt;
  opt.transport = GetParam();
  opt.killAfterMs = 60000;
  auto res = runRanks(
      4,
      [](int rank, int p, loomComm_t comm) -> std::string {
        std::vector<float> buf((64u << 20) / 4, 1.0f);
        // Warm up, then rank 2 dies in the middle of the next all-reduce.
        if (loomAllReduce(buf.data(), buf.data(), 1024, loomFloat32, loomSum, comm, nullptr) !=
            loomSuccess)
          return "warm-up failed";
        if (rank == 2) {
          std::thread([] {
            std::this_thread::sleep_for(std::chrono::milliseconds(30));
            raise(SIGKILL);
          }).detach();
        }
        auto t0 = Clock::now();
        for (int i = 0; i < 1000; ++i) {
          loomResult_t r = loomAllReduce(buf.data(), buf.data(), buf.size(), loomFloat32, loomSum,
                                         comm, nullptr);
          if (r == loomSuccess) continue;
          double s = std::chrono::duration<double>(Clock::now() - t0).count();
          std::string msg = loomGetLastError(comm);
          if (r != loomRemoteError && r != loomTimeout) return "wrong code: " + msg;
          if (msg.find("rank 2") == std::string::npos) return "error does not name rank 2: " + msg;
          if (s > 10) return "error took " + std::to_string(s) + " s";
          return "";
        }
        return "rank 2 died but all-reduces kept succeeding";
      },
      opt);
  ASSERT_EQ(res.size(), 4u);
  EXPECT_EQ(res[2].signal, SIGKILL);
  for (int r : {0, 1, 3}) EXPECT_EQ(res[r].exitCode, 0) << res[r].message;
  EXPECT_EQ(leftoverSegments(before), "") << "shared-memory segments left in /dev/shm";
}

TEST_P(Faults, AbortFromAnotherThreadReturnsWithinASecond) {
  RankOptions opt;
  opt.transport = GetParam();
  auto res = runRanks(
      2,
      [](int rank, int p, loomComm_t comm) -> std::string {
        if (rank == 1) {
          // Never joins: rank 0's all-reduce waits until aborted.
          std::this_thread::sleep_for(std::chrono::seconds(3));
          return "";
        }
        std::thread killer([comm] {
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
          loomCommAbort(comm);
        });
        std::vector<float> buf(1 << 16, 1.0f);
        auto t0 = Clock::now();
        loomResult_t r =
            loomAllReduce(buf.data(), buf.data(), buf.size(), loomFloat32, loomSum, comm, nullptr);
        double s = std::chrono::duration<double>(Clock::now() - t0).count();
        killer.join();
        if (r == loomSuccess) return "aborted all-reduce succeeded";
        if (s > 1.3) return "abort took " + std::to_string(s) + " s";
        _exit(0);  // comm is gone; skip the harness's destroy
      },
      opt);
  EXPECT_EQ(failures(res), "");
}

TEST_P(Faults, TimeoutNamesTheMissingRank) {
  RankOptions opt;
  opt.transport = GetParam();
  opt.commTimeoutMs = 1500;
  auto res = runRanks(
      3,
      [](int rank, int p, loomComm_t comm) -> std::string {
        if (rank == 2) {
          std::this_thread::sleep_for(std::chrono::seconds(4));
          return "";
        }
        std::vector<int> buf(1000, 1);
        auto t0 = Clock::now();
        loomResult_t r =
            loomAllReduce(buf.data(), buf.data(), buf.size(), loomInt32, loomSum, comm, nullptr);
        double s = std::chrono::duration<double>(Clock::now() - t0).count();
        std::string msg = loomGetLastError(comm);
        if (r != loomTimeout)
          return std::string("expected timeout, got ") + loomGetErrorString(r) + ": " + msg;
        if (s < 1.4 || s > 3.5) return "timeout after " + std::to_string(s) + " s";
        if (msg.find("rank") == std::string::npos) return "message names no rank: " + msg;
        // Stay connected a while: the other waiting rank may have started later and must reach
        // its own timeout rather than see this rank leave.
        std::this_thread::sleep_for(std::chrono::milliseconds(2500));
        _exit(0);
      },
      opt);
  EXPECT_EQ(failures(res), "");
}

std::vector<std::string> faultTransports() {
  std::vector<std::string> t = {"shm", "tcp"};
  if (transport::ucxBuilt()) t.push_back("ucx");  // UCX's default transports (tcp and shm here)
  return t;
}
INSTANTIATE_TEST_SUITE_P(Transports, Faults, ::testing::ValuesIn(faultTransports()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace loom::testing
