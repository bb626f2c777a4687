// LOOM_ALGO=allreduce:direct end to end. Over shm (one host) every all-reduce up to
// LOOM_SHM_DIRECT_BYTES takes the one-host direct path and larger ones fall back to the cost
// model, exact for p in {2, 3, 4, 5, 8} and counts not divisible by p, in place and out of place;
// the PLAN log says which. Where the communicator has no direct path (tcp), every all-reduce falls
// back to the cost model with the reason logged (a warning at init, the reason on every decision):
// no error, no hang, exact results.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "coll/coll_checks.h"
#include "core/identity.h"
#include "harness/rank_harness.h"

namespace loom::testing {
namespace {

// Runs `body` with this process's stderr (where loom logs) sent to a file; returns the body's
// result and, in *log, what was logged meanwhile.
template <typename Body>
std::string capturingLog(Body body, std::string* log) {
  char path[] = "/tmp/loom-direct-forced-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return "mkstemp failed";
  std::fflush(stderr);
  int saved = dup(2);
  dup2(fd, 2);
  std::string e = body();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  *log = ss.str();
  unlink(path);
  return e;
}

// Every count, float32 sum and int32 max, out of place and in place.
std::string exactAllReduces(loomComm_t comm, int rank, int p, const std::vector<uint64_t>& counts) {
  for (uint64_t n : counts)
    for (bool inPlace : {false, true}) {
      std::string e = allReduce(comm, rank, p, n, loomFloat32, loomSum, inPlace);
      if (e.empty()) e = allReduce(comm, rank, p, n, loomInt32, loomMax, inPlace);
      if (!e.empty()) return e + " (n=" + std::to_string(n) + (inPlace ? ", in place)" : ")");
    }
  return "";
}

std::string expectLine(const std::string& log, const std::string& what) {
  return log.find(what) != std::string::npos ? "" : "the log lacks \"" + what + "\":\n" + log;
}

RankOptions forcedDirect(const std::string& transport) {
  RankOptions opt;
  opt.transport = transport;
  opt.killAfterMs = 60000;  // a hang fails the test
  opt.env = {{"LOOM_ALGO", "allreduce:direct"},
             {"LOOM_DEBUG", "INFO"},
             {"LOOM_DEBUG_SUBSYS", "PLAN"},
             {"LOOM_SHM_DIRECT_BYTES", "32768"}};
  return opt;
}

TEST(DirectForced, ExactOverShmForRankCounts) {
  for (int p : {2, 3, 4, 5, 8}) {
    auto res = runRanks(
        p,
        [](int rank, int np, loomComm_t comm) -> std::string {
          std::string log;
          // 8191 and 8192 floats fit the 32 KiB slot, 8193 does not; 2^20 + 3 is far above.
          std::vector<uint64_t> counts = {0, 1, 1000, 8191, 8192, 8193, (1u << 20) + 3};
          if (np > 2) counts.push_back(np - 1);
          std::string e =
              capturingLog([&] { return exactAllReduces(comm, rank, np, counts); }, &log);
          if (!e.empty()) return e;
          const std::string on = " on " + std::to_string(np) + " ranks: ";
          for (const char* size : {"4 B", "4000 B", "32764 B", "32 KiB"}) {
            e = expectLine(log,
                           std::string("allreduce ") + size + " float32" + on + "direct predicted");
            if (!e.empty()) return e;
          }
          return expectLine(log, "allreduce 32772 B float32" + on);
        },
        forcedDirect("shm"));
    ASSERT_EQ(failures(res), "") << "p=" << p;
  }
}

TEST(DirectForced, AboveTheSlotTheModelDecidesAndSaysWhy) {
  auto res = runRanks(
      3,
      [](int rank, int np, loomComm_t comm) -> std::string {
        std::string log;
        std::string e = capturingLog([&] { return exactAllReduces(comm, rank, np, {8193}); }, &log);
        if (!e.empty()) return e;
        return expectLine(log, "(cost, LOOM_ALGO's direct does not apply");
      },
      forcedDirect("shm"));
  EXPECT_EQ(failures(res), "");
}

// Over tcp (as with ranks on several hosts) there is no direct path: a warning when a
// communicator is made, the reason with every decision, and exact results at every size.
TEST(DirectForced, TcpFallsBackToTheModelWithTheReasonLogged) {
  for (int p : {2, 3, 5}) {
    auto res = runRanks(
        p,
        [](int rank, int np, loomComm_t comm) -> std::string {
          std::string log;
          std::string e = capturingLog(
              [&]() -> std::string {
                // A communicator made while the log is captured, for its warning.
                loomComm_t sub = nullptr;
                loomConfig_t cfg = LOOM_CONFIG_INITIALIZER;
                cfg.transport = "tcp";
                LOOM_TRY(loomCommSplit(comm, 0, rank, &sub, &cfg));
                std::string r = exactAllReduces(sub, rank, np, {1, 7, 1000, 8193});
                loomCommDestroy(sub);
                if (r.empty()) r = exactAllReduces(comm, rank, np, {0, 3, 8191});
                return r;
              },
              &log);
          if (!e.empty()) return e;
          e = expectLine(log, "has no one-host direct path");
          if (e.empty()) e = expectLine(log, "(cost, LOOM_ALGO's direct does not apply");
          return e;
        },
        forcedDirect("tcp"));
    ASSERT_EQ(failures(res), "") << "p=" << p;
  }
}

// More ranks on the host than CPUs: the planner prices the shared cores by itself. Nobody warns;
// with LOOM_DEBUG=INFO rank 0 says once what it detected, also when LOOM_PLAN_PARAMS holds a
// calibration (which may set `cores` itself).
TEST(PlannerOversubscribed, PricesTheSharedCoresWithoutAWarning) {
  const int cpus = usableCpus();
  if (cpus > 15) GTEST_SKIP() << "needs more ranks than this machine's " << cpus << " CPUs";
  const int p = cpus + 1;
  for (bool calibrated : {false, true}) {
    RankOptions opt;
    opt.transport = "shm";
    opt.killAfterMs = 60000;
    opt.env = {{"LOOM_DEBUG", "INFO"}, {"LOOM_DEBUG_SUBSYS", "PLAN"}};
    if (calibrated) opt.env.push_back({"LOOM_PLAN_PARAMS", "cores=" + std::to_string(cpus)});
    auto res = runRanks(
        p,
        [calibrated, cpus](int rank, int np, loomComm_t comm) -> std::string {
          std::string log;
          std::string e = capturingLog(
              [&]() -> std::string {
                loomComm_t sub = nullptr;  // made while the log is captured, for its INFO line
                LOOM_TRY(loomCommSplit(comm, 0, rank, &sub, nullptr));
                std::string r = exactAllReduces(sub, rank, np, {1000, 300000});
                loomCommDestroy(sub);
                return r;
              },
              &log);
          if (!e.empty()) return e;
          if (log.find(" loom WARN ") != std::string::npos)
            return "rank " + std::to_string(rank) + " warned: " + log;
          const std::string what =
              std::to_string(np) + " ranks share this host's " + std::to_string(cpus) +
              " CPUs; the planner prices the shared cores (cores=" + std::to_string(cpus) + ")";
          if (rank == 0) return expectLine(log, what);
          return log.find("ranks share this host's") == std::string::npos
                     ? ""
                     : "rank " + std::to_string(rank) + " logged the detection too: " + log;
        },
        opt);
    ASSERT_EQ(failures(res), "") << "calibrated=" << calibrated;
  }
}

}  // namespace
}  // namespace loom::testing
