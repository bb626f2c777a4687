// Mismatched collective calls (issue 46, item 8): rank 1 calls something other than the rest (a
// different count, datatype, op, root or collective), on and off the one-host direct path, over
// shm and tcp, at 2 and 4 ranks. Every rank must fail (never succeed with a wrong answer, never
// wait for the timeout) with an error that names both calls. A stale communicator handle whose
// address a new communicator could reuse is refused.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "core/call_desc.h"
#include "harness/rank_harness.h"
#include "sched/schedule.h"

namespace loom::testing {
namespace {

using Clock = std::chrono::steady_clock;

// One rank's call: what it does and how the library will describe it.
struct Call {
  std::function<loomResult_t(loomComm_t)> run;
  std::string desc;
};

Call allReduce(size_t n, loomDataType_t dt, loomRedOp_t op) {
  const char* dn = dt == loomFloat64 ? "float64" : "float32";
  const char* on = op == loomMax ? "max" : "sum";
  return {[=](loomComm_t c) {
            std::vector<uint8_t> buf(n * (dt == loomFloat64 ? 8 : 4), 1);
            return loomAllReduce(buf.data(), buf.data(), n, dt, op, c, nullptr);
          },
          "allreduce(count=" + std::to_string(n) + ", " + dn + ", " + on + ")"};
}

Call broadcast(size_t n, int root) {
  return {[=](loomComm_t c) {
            std::vector<float> buf(n, 1.0f);
            return loomBroadcast(buf.data(), buf.data(), n, loomFloat32, root, c, nullptr);
          },
          "broadcast(count=" + std::to_string(n) + ", float32, root=" + std::to_string(root) + ")"};
}

struct Case {
  const char* name;
  Call others, odd;  // every rank but rank 1 calls `others`; rank 1 calls `odd`
};

std::vector<Case> cases() {
  const size_t kBig = 1000000;
  return {
      {"count_direct", allReduce(1000, loomFloat32, loomSum),
       allReduce(1001, loomFloat32, loomSum)},
      // 32 KiB is the direct path's limit: one rank on it, the other on the rings.
      {"count_edge", allReduce(8192, loomFloat32, loomSum), allReduce(8193, loomFloat32, loomSum)},
      {"count_large", allReduce(kBig, loomFloat32, loomSum),
       allReduce(kBig + 1, loomFloat32, loomSum)},
      {"dtype_direct", allReduce(1000, loomFloat32, loomSum),
       allReduce(1000, loomFloat64, loomSum)},
      {"dtype_large", allReduce(kBig, loomFloat32, loomSum), allReduce(kBig, loomFloat64, loomSum)},
      {"op_direct", allReduce(1000, loomFloat32, loomSum), allReduce(1000, loomFloat32, loomMax)},
      {"op_large", allReduce(kBig, loomFloat32, loomSum), allReduce(kBig, loomFloat32, loomMax)},
      {"kind_direct", allReduce(1000, loomFloat32, loomSum), broadcast(1000, 0)},
      {"kind_large", allReduce(kBig, loomFloat32, loomSum), broadcast(kBig, 0)},
      {"root_small", broadcast(1000, 0), broadcast(1000, 1)},
      {"root_large", broadcast(kBig, 0), broadcast(kBig, 1)},
  };
}

// Every rank: the mismatched call fails within a few seconds, naming both calls. A mismatch that
// no message of the call itself reveals (two ranks that both think they are the broadcast root and
// only send) is caught by the next call in the default mode, and by the call itself under
// LOOM_CHECK_CALLS=strict.
std::string expectMismatch(int rank, loomComm_t comm, const Case& k, bool strict) {
  const Call& mine = rank == 1 ? k.odd : k.others;
  const auto t0 = Clock::now();
  loomResult_t r = mine.run(comm);
  const bool rootOnly = std::string(k.name).rfind("root", 0) == 0;
  if (r == loomSuccess && rootOnly && !strict) r = loomBarrier(comm, nullptr);
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  const std::string msg = loomGetLastError(comm);
  if (r == loomSuccess) return std::string(k.name) + ": the mismatched call succeeded";
  if (r == loomTimeout) return std::string(k.name) + ": timed out: " + msg;
  if (s > 20) return std::string(k.name) + ": error took " + std::to_string(s) + " s: " + msg;
  if (msg.find("call mismatch: rank ") == std::string::npos ||
      msg.find(k.others.desc) == std::string::npos || msg.find(k.odd.desc) == std::string::npos)
    return std::string(k.name) + ": error does not name both calls (" + k.others.desc + ", " +
           k.odd.desc + "): " + msg;
  // The communicator is unusable afterwards, and says why.
  float x = 1;
  if (loomAllReduce(&x, &x, 1, loomFloat32, loomSum, comm, nullptr) == loomSuccess)
    return std::string(k.name) + ": an all-reduce after the mismatch succeeded";
  return "";
}

class Mismatch : public ::testing::TestWithParam<std::tuple<std::string, int, std::string>> {};

TEST_P(Mismatch, EveryRankFailsNamingBothCalls) {
  const auto& [transport, nranks, mode] = GetParam();
  for (const Case& k : cases()) {
    RankOptions opt;
    opt.transport = transport;
    opt.killAfterMs = 90000;  // a hang fails the test long before the 600 s default timeout
    opt.env = {{"LOOM_CHECK_CALLS", mode}};
    const bool strict = mode == "strict";
    auto res = runRanks(
        nranks,
        [&](int rank, int, loomComm_t comm) {
          float warm = 1;  // connections up, direct path used once
          if (loomAllReduce(&warm, &warm, 1, loomFloat32, loomSum, comm, nullptr) != loomSuccess)
            return std::string("warm-up: ") + loomGetLastError(comm);
          return expectMismatch(rank, comm, k, strict);
        },
        opt);
    EXPECT_EQ(failures(res), "") << k.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Calls, Mismatch,
                         ::testing::Combine(::testing::Values("shm", "tcp"),
                                            ::testing::Values(2, 4),
                                            ::testing::Values("on", "strict")),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_np" +
                                  std::to_string(std::get<1>(info.param)) + "_" +
                                  std::get<2>(info.param);
                         });

// Matching calls still succeed with checks on, strict and off (and point-to-point is unchecked).
TEST(Mismatch, MatchingCallsSucceedInEveryMode) {
  for (const char* mode : {"on", "strict", "off"}) {
    RankOptions opt;
    opt.env = {{"LOOM_CHECK_CALLS", mode}};
    auto res = runRanks(
        3,
        [](int rank, int p, loomComm_t comm) -> std::string {
          for (size_t n : {size_t{1}, size_t{1000}, size_t{300000}}) {
            std::vector<float> buf(n, 1.0f);
            if (loomAllReduce(buf.data(), buf.data(), n, loomFloat32, loomSum, comm, nullptr) !=
                    loomSuccess ||
                buf[n - 1] != static_cast<float>(p))
              return std::string("allreduce: ") + loomGetLastError(comm);
            if (loomBroadcast(buf.data(), buf.data(), n, loomFloat32, 2, comm, nullptr) !=
                loomSuccess)
              return std::string("broadcast: ") + loomGetLastError(comm);
          }
          int v = rank;
          if (rank == 0 && loomSend(&v, 1, loomInt32, 1, comm, nullptr) != loomSuccess)
            return std::string("send: ") + loomGetLastError(comm);
          if (rank == 1 && (loomRecv(&v, 1, loomInt32, 0, comm, nullptr) != loomSuccess || v != 0))
            return std::string("recv: ") + loomGetLastError(comm);
          if (loomBarrier(comm, nullptr) != loomSuccess)
            return std::string("barrier: ") + loomGetLastError(comm);
          return "";
        },
        opt);
    EXPECT_EQ(failures(res), "") << "LOOM_CHECK_CALLS=" << mode;
  }
}

TEST(Mismatch, BadCheckCallsValueIsRejected) {
  RankOptions opt;
  opt.env = {{"LOOM_CHECK_CALLS", "sometimes"}};
  auto res = runRanks(
      1, [](int, int, loomComm_t) { return std::string(); }, opt);
  ASSERT_EQ(res.size(), 1u);
  EXPECT_NE(res[0].message.find("LOOM_CHECK_CALLS"), std::string::npos) << res[0].message;
}

// core/call_desc.cc names collectives without seeing sched: the names must agree.
TEST(CallDesc, NamesAgreeWithTheSchedulesCollectives) {
  for (int c = 0; c < sched::kNumCollTypes; ++c) {
    CallDesc d;
    d.checked = 1;
    d.coll = static_cast<uint8_t>(c);
    d.dtype = 7;
    const std::string want = sched::collName(static_cast<sched::CollType>(c));
    EXPECT_EQ(describeCall(d).substr(0, want.size() + 1), want + "(") << c;
  }
  CallDesc a;
  a.checked = 1;
  a.seq = 3;
  a.count = 1000;
  a.dtype = 7;
  a.op = 0;
  CallDesc b = a;
  b.count = 1001;
  EXPECT_EQ(describeCall(a), "allreduce(count=1000, float32, sum)");
  const std::string m = callMismatch(0, a, 1, b, "a test").message();
  EXPECT_NE(m.find("rank 0 called allreduce(count=1000, float32, sum) but rank 1 called "
                   "allreduce(count=1001, float32, sum) (call #3 of both)"),
            std::string::npos)
      << m;
}

// A destroyed communicator (or stream) stays invalid even after new ones are created: the new ones
// never take its address, so the stale handle cannot be mistaken for them.
TEST(StaleHandle, DestroyedCommunicatorAndStreamAreRefused) {
  std::vector<loomComm_t> stale;
  std::vector<loomStream_t> staleStreams;
  for (int i = 0; i < 4; ++i) {
    loomUniqueId id;
    ASSERT_EQ(loomGetUniqueId(&id), loomSuccess);
    loomComm_t c = nullptr;
    ASSERT_EQ(loomCommInitRank(&c, 1, id, 0), loomSuccess) << loomGetLastError(nullptr);
    for (loomComm_t old : stale) EXPECT_NE(c, old) << "a new communicator took a stale address";
    ASSERT_EQ(loomCommDestroy(c), loomSuccess);
    stale.push_back(c);
    loomStream_t s = nullptr;
    ASSERT_EQ(loomStreamCreate(&s), loomSuccess);
    for (loomStream_t old : staleStreams) EXPECT_NE(s, old) << "a new stream took a stale address";
    ASSERT_EQ(loomStreamDestroy(s), loomSuccess);
    staleStreams.push_back(s);
  }
  loomUniqueId id;
  ASSERT_EQ(loomGetUniqueId(&id), loomSuccess);
  loomComm_t live = nullptr;
  ASSERT_EQ(loomCommInitRank(&live, 1, id, 0), loomSuccess);
  for (loomComm_t old : stale) {
    int n = 0;
    EXPECT_EQ(loomCommCount(old, &n), loomInvalidUsage);
    float x = 1;
    EXPECT_EQ(loomAllReduce(&x, &x, 1, loomFloat32, loomSum, old, nullptr), loomInvalidUsage);
  }
  for (loomStream_t old : staleStreams) EXPECT_NE(loomStreamQuery(old), loomSuccess);
  EXPECT_EQ(loomCommDestroy(live), loomSuccess);
}

}  // namespace
}  // namespace loom::testing
