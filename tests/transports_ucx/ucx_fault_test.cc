// Faults over the ucx transport: a SIGKILLed rank is named by every survivor within the timeout,
// over UCX's tcp and its shared-memory transports; an idle rank waiting on UCX sleeps (uses almost
// no CPU) and a message wakes it; UCX's own warnings go to loom's log, not to stderr.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness/rank_harness.h"

namespace loom::testing {
namespace {

using Clock = std::chrono::steady_clock;

double cpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
         1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

class UcxFaults : public ::testing::TestWithParam<std::string> {};

TEST_P(UcxFaults, KilledRankIsNamedByEverySurvivor) {
  RankOptions opt;
  opt.transport = "ucx";
  opt.env = {{"UCX_TLS", GetParam()}};
  opt.commTimeoutMs = 60000;
  opt.killAfterMs = 120000;
  auto res = runRanks(
      4,
      [](int rank, int p, loomComm_t comm) -> std::string {
        std::vector<float> buf((16u << 20) / 4, 1.0f);
        if (loomAllReduce(buf.data(), buf.data(), 1024, loomFloat32, loomSum, comm, nullptr) !=
            loomSuccess)
          return std::string("warm-up failed: ") + loomGetLastError(comm);
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
          if (r != loomRemoteError) return "wrong code: " + msg;
          if (msg.find("rank 2") == std::string::npos) return "error does not name rank 2: " + msg;
          // Well inside the communicator's 60 s timeout: the failure is detected, not timed out.
          if (s > 20) return "error took " + std::to_string(s) + " s";
          return "";
        }
        return "rank 2 died but all-reduces kept succeeding";
      },
      opt);
  ASSERT_EQ(res.size(), 4u);
  EXPECT_EQ(res[2].signal, SIGKILL);
  for (int r : {0, 1, 3})
    EXPECT_EQ(res[r].exitCode, 0) << "rank " << r << " (signal " << res[r].signal
                                  << "): " << res[r].message;
}

INSTANTIATE_TEST_SUITE_P(Tls, UcxFaults, ::testing::Values("tcp", "sm"),
                         [](const auto& info) { return info.param; });

// Rank 1 waits 2 s for a message rank 0 sends late: it sleeps on the worker's event fd instead of
// spinning (CPU time far below the wait), and the message still arrives.
TEST(UcxSleep, IdleRankSleepsAndWakesForTheMessage) {
  RankOptions opt;
  opt.transport = "ucx";
  opt.env = {{"UCX_TLS", "tcp"}};
  auto res = runRanks(
      2,
      [](int rank, int p, loomComm_t comm) -> std::string {
        int v = 41;
        if (loomAllReduce(&v, &v, 1, loomInt32, loomSum, comm, nullptr) != loomSuccess)
          return "warm-up failed";
        if (rank == 0) {
          std::this_thread::sleep_for(std::chrono::seconds(2));
          v = 7;
          if (loomSend(&v, 1, loomInt32, 1, comm, nullptr) != loomSuccess) return "send failed";
          return "";
        }
        const double cpu0 = cpuSeconds();
        const auto t0 = Clock::now();
        if (loomRecv(&v, 1, loomInt32, 0, comm, nullptr) != loomSuccess)
          return std::string("recv failed: ") + loomGetLastError(comm);
        const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
        const double cpu = cpuSeconds() - cpu0;
        if (v != 7) return "received " + std::to_string(v);
        if (wall < 1.0) return "returned before the message was sent";
        // A spinning rank burns ~wall seconds of CPU; a sleeping one a few milliseconds.
        if (cpu > 0.25 * wall)
          return "waiting rank used " + std::to_string(cpu) + " s CPU in " + std::to_string(wall) +
                 " s";
        return "";
      },
      opt);
  EXPECT_EQ(failures(res), "");
}

// UCX warns about an unknown UCX_ variable at start-up; the line must reach loom's log file and
// not stderr.
TEST(UcxLog, UcxWarningsGoToLoomsLog) {
  char tmpl[] = "/tmp/loom-ucx-log-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  RankOptions opt;
  opt.transport = "ucx";
  opt.env = {{"UCX_TLS", "tcp"},
             {"UCX_LOOM_TEST_NOT_A_VARIABLE", "1"},
             {"LOOM_DEBUG_FILE", dir + "/log.%p"}};
  // The ranks inherit this process's stderr: point it at a file while they run.
  const std::string errPath = dir + "/stderr";
  fflush(stderr);
  const int saved = dup(2);
  const int fd = open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  dup2(fd, 2);
  close(fd);
  auto res = runRanks(
      2,
      [](int rank, int p, loomComm_t comm) -> std::string {
        int v = 1;
        if (loomAllReduce(&v, &v, 1, loomInt32, loomSum, comm, nullptr) != loomSuccess)
          return "all-reduce failed";
        return "";
      },
      opt);
  dup2(saved, 2);
  close(saved);
  ASSERT_EQ(failures(res), "");
  std::string logs, errs;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::ifstream f(e.path());
    std::stringstream ss;
    ss << f.rdbuf();
    (e.path().filename().string().rfind("stderr", 0) == 0 ? errs : logs) += ss.str();
  }
  std::filesystem::remove_all(dir);
  EXPECT_NE(logs.find("UCX_LOOM_TEST_NOT_A_VARIABLE"), std::string::npos) << logs;
  EXPECT_EQ(errs.find("UCX_LOOM_TEST_NOT_A_VARIABLE"), std::string::npos) << errs;
}

}  // namespace
}  // namespace loom::testing
