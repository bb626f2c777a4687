// The one-host direct path (LOOM_SHM_DIRECT_BYTES) for small all-reduces and barriers: exact and
// bit-identical on every rank, safe when direct and scheduled calls alternate (slot reuse across
// parities), bypassed by LOOM_ALGO, and a dead or absent peer is named within the timeout.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "harness/rank_harness.h"

namespace loom::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::string check(loomResult_t r, loomComm_t comm, const char* what) {
  return r == loomSuccess ? "" : std::string(what) + ": " + loomGetLastError(comm);
}

// Alternates sizes around the direct threshold (32 KiB by default), barriers, in place and
// out of place; every result is checked, and the float results are compared bit for bit across
// ranks (rank 0 broadcasts its bits).
std::string mixedCalls(int rank, int p, loomComm_t comm) {
  const size_t counts[] = {1, 7, 8192, 8193, 3, 0, 16384, 1024};
  for (int iter = 0; iter < 300; ++iter) {
    size_t n = counts[iter % 8];
    std::vector<int32_t> in(n), out(n, -1);
    for (size_t i = 0; i < n; ++i) in[i] = static_cast<int32_t>(rank * 1000 + i + iter);
    bool inPlace = iter % 3 == 0;
    loomResult_t r = loomAllReduce(in.data(), inPlace ? in.data() : out.data(), n, loomInt32,
                                   loomSum, comm, nullptr);
    if (r != loomSuccess) return check(r, comm, "allreduce");
    const std::vector<int32_t>& got = inPlace ? in : out;
    for (size_t i = 0; i < n; ++i) {
      int64_t want = 1000LL * p * (p - 1) / 2 + static_cast<int64_t>(p) * (i + iter);
      if (got[i] != want)
        return "iter " + std::to_string(iter) + " n " + std::to_string(n) + " elem " +
               std::to_string(i) + ": " + std::to_string(got[i]) + " != " + std::to_string(want);
    }
    if (iter % 5 == 0 && loomBarrier(comm, nullptr) != loomSuccess)
      return check(loomBarrier(comm, nullptr), comm, "barrier");
  }
  // Floats with rank-dependent rounding: every rank must hold the same bits.
  std::vector<float> f(333), g(333), ref(333);
  for (size_t i = 0; i < f.size(); ++i) f[i] = 1.0f / static_cast<float>(rank + 3 + i);
  std::string e =
      check(loomAllReduce(f.data(), g.data(), f.size(), loomFloat32, loomSum, comm, nullptr), comm,
            "float allreduce");
  if (!e.empty()) return e;
  ref = g;
  e = check(loomBroadcast(ref.data(), ref.data(), ref.size(), loomFloat32, 0, comm, nullptr), comm,
            "broadcast");
  if (!e.empty()) return e;
  if (std::memcmp(ref.data(), g.data(), g.size() * sizeof(float)) != 0)
    return "float sums differ from rank 0's bits";
  // avg and max through the direct path.
  std::vector<double> d(5, rank + 1.0), dout(5);
  e = check(loomAllReduce(d.data(), dout.data(), 5, loomFloat64, loomAvg, comm, nullptr), comm,
            "avg");
  if (!e.empty()) return e;
  if (dout[4] != (p + 1) / 2.0) return "avg " + std::to_string(dout[4]);
  e = check(loomAllReduce(d.data(), dout.data(), 5, loomFloat64, loomMax, comm, nullptr), comm,
            "max");
  if (!e.empty()) return e;
  return dout[0] == p ? "" : "max " + std::to_string(dout[0]);
}

TEST(ShmDirect, MixedSizesAndBarriersAreExact) {
  for (int p : {2, 3, 8}) {
    SCOPED_TRACE(p);
    EXPECT_EQ(failures(runRanks(p, mixedCalls)), "");
  }
}

TEST(ShmDirect, ForcedAlgorithmAndSwitchedOffGiveTheSameResults) {
  RankOptions forced;
  forced.env = {
      {"LOOM_ALGO", "allreduce:ring"}, {"LOOM_DEBUG", "INFO"}, {"LOOM_DEBUG_SUBSYS", "PLAN"}};
  EXPECT_EQ(failures(runRanks(3, mixedCalls, forced)), "");
  RankOptions off;
  off.env = {{"LOOM_SHM_DIRECT_BYTES", "0"}};
  EXPECT_EQ(failures(runRanks(4, mixedCalls, off)), "");
  RankOptions big;
  big.env = {{"LOOM_SHM_DIRECT_BYTES", "70000"}};
  EXPECT_EQ(failures(runRanks(3, mixedCalls, big)), "");
}

// One 1-element all-reduce that must fail with `want`, naming `peer`, after lo..hi seconds.
std::string failsNaming(loomComm_t comm, loomResult_t want, const std::string& peer, double lo,
                        double hi) {
  float x = 1;
  auto t0 = Clock::now();
  loomResult_t r = loomAllReduce(&x, &x, 1, loomFloat32, loomSum, comm, nullptr);
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::string msg = loomGetLastError(comm);
  if (r != want) return "code " + std::to_string(r) + ": " + msg;
  if (msg.find(peer) == std::string::npos) return "does not name " + peer + ": " + msg;
  return s > lo && s < hi ? "" : "took " + std::to_string(s) + " s";
}

TEST(ShmDirect, KilledPeerIsNamed) {
  RankOptions opt;
  opt.killAfterMs = 60000;
  auto res = runRanks(
      3,
      [](int rank, int, loomComm_t comm) -> std::string {
        float x = 1;
        if (loomAllReduce(&x, &x, 1, loomFloat32, loomSum, comm, nullptr) != loomSuccess)
          return "warm-up failed";
        if (rank == 1) raise(SIGKILL);
        return failsNaming(comm, loomRemoteError, "rank 1", 0, 5);
      },
      opt);
  EXPECT_EQ(res[0].message, "");
  EXPECT_EQ(res[2].message, "");
  EXPECT_EQ(res[1].signal, SIGKILL);
}

TEST(ShmDirect, AbsentPeerTimesOutNamingIt) {
  RankOptions opt;
  opt.commTimeoutMs = 1500;
  auto res = runRanks(
      3,
      [](int rank, int, loomComm_t comm) -> std::string {
        if (rank == 2) {  // never joins; stays alive until the others have given up
          std::this_thread::sleep_for(std::chrono::milliseconds(3000));
          return "";
        }
        return failsNaming(comm, loomTimeout, "rank 2", 1.2, 4);
      },
      opt);
  EXPECT_EQ(failures(res), "");
}

}  // namespace
}  // namespace loom::testing
