// Single-copy (Cross Memory Attach) path of the shm transport: exact bytes and reductions around
// LOOM_SHM_CMA_THRESHOLD, the ring fallback (LOOM_SHM_CMA=off, a failed probe), setup errors,
// dead peers in the middle of a single-copy message, and every collective through the public API
// with single copy forced on.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "coll/coll_checks.h"
#include "core/params.h"
#include "harness/rank_harness.h"
#include "shm_harness.h"
#include "transports/shm/transport.h"

namespace loom::test {
namespace {

using transport::Request;
using transport::Transport;
using transport::shm::ShmTransport;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kThreshold = 4096;

// Sets environment variables for the ranks forked while it lives (params are re-read).
class ScopedEnv {
 public:
  explicit ScopedEnv(std::vector<std::pair<std::string, std::string>> vars)
      : vars_(std::move(vars)) {
    for (const auto& [k, v] : vars_) setenv(k.c_str(), v.c_str(), 1);
    params::resetCacheForTesting();
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    for (const auto& kv : vars_) unsetenv(kv.first.c_str());
    params::resetCacheForTesting();
    ShmTransport::failCmaProbeForTesting(-1);
  }

 private:
  std::vector<std::pair<std::string, std::string>> vars_;
};

ScopedEnv cmaEnv(const char* mode, uint64_t threshold = kThreshold) {
  return ScopedEnv({{"LOOM_SHM_CMA", mode}, {"LOOM_SHM_CMA_THRESHOLD", std::to_string(threshold)}});
}

void expectAllOk(const std::vector<RankOutcome>& out) {
  for (size_t r = 0; r < out.size(); ++r) {
    EXPECT_TRUE(out[r].exited && out[r].exitCode == 0)
        << "rank " << r << " exit " << out[r].exitCode << " signal " << out[r].signal << ": "
        << out[r].message;
  }
}

// Below, at and above the threshold, odd sizes, more than the ring (1 MiB by default) and than one
// slice.
const std::vector<uint64_t> kCopySizes = {0,
                                          1,
                                          kThreshold - 1,
                                          kThreshold,
                                          kThreshold + 1,
                                          3 * kThreshold + 5,
                                          (1 << 20) + 3,
                                          (5 << 20) + 7};
// Reductions (int32): whole elements; crosses the 128 KiB block of reducing single-copy reads.
const std::vector<uint64_t> kReduceSizes = {kThreshold - 4, kThreshold, kThreshold + 4,
                                            3 * (128 << 10) + 12, (5 << 20) + 4};

int32_t value(int rank, uint64_t i) { return static_cast<int32_t>(rank * 1000003 + i * 7); }

// Every rank sends each size to the next rank and receives from the previous one, all posted at
// once (so single-copy descriptors and ring messages interleave), then reduces the same way out of
// place and in place. Returns "" or the first wrong byte; *singles counts messages at or above the
// threshold that this rank received.
std::string exchange(RankCtx& ctx, Transport* t, uint64_t* singles) {
  const int n = ctx.nranks, next = (ctx.rank + 1) % n, prev = (ctx.rank + n - 1) % n;
  std::vector<std::vector<uint8_t>> out(kCopySizes.size()), in(kCopySizes.size());
  std::vector<Request> sends(kCopySizes.size()), recvs(kCopySizes.size());
  std::vector<Request*> all;
  *singles = 0;
  for (size_t m = 0; m < kCopySizes.size(); ++m) {
    out[m].resize(kCopySizes[m] + 1);
    in[m].assign(kCopySizes[m] + 1, 0xee);
    fillPattern(out[m].data(), kCopySizes[m], ctx.rank, next, static_cast<int>(m));
    sends[m] = makeSend(out[m].data(), kCopySizes[m]);
    recvs[m] = makeRecv(in[m].data(), kCopySizes[m]);
    RANK_OK(ctx, t->post(next, &sends[m]));
    RANK_OK(ctx, t->post(prev, &recvs[m]));
    all.push_back(&sends[m]);
    all.push_back(&recvs[m]);
    *singles += kCopySizes[m] >= kThreshold ? 1 : 0;
  }
  RANK_OK(ctx, drive(t, all, 20000));
  for (size_t m = 0; m < kCopySizes.size(); ++m) {
    std::string e = checkPattern(in[m].data(), kCopySizes[m], prev, ctx.rank, static_cast<int>(m));
    RANK_CHECK(ctx, e.empty(), e);
    RANK_CHECK(ctx, in[m][kCopySizes[m]] == 0xee, "wrote past the end of message ", m);
  }
  for (bool inPlace : {false, true}) {
    all.clear();
    std::vector<std::vector<int32_t>> mine(kReduceSizes.size()), got(kReduceSizes.size());
    std::vector<Request> rs(kReduceSizes.size()), rr(kReduceSizes.size());
    for (size_t m = 0; m < kReduceSizes.size(); ++m) {
      const uint64_t count = kReduceSizes[m] / 4;
      mine[m].resize(count);
      for (uint64_t i = 0; i < count; ++i) mine[m][i] = value(ctx.rank, i + m);
      got[m].assign(count, -1);
      if (inPlace) got[m] = mine[m];
      rs[m] = makeSend(reinterpret_cast<uint8_t*>(mine[m].data()), kReduceSizes[m]);
      rr[m] = makeRecv(reinterpret_cast<uint8_t*>(got[m].data()), kReduceSizes[m]);
      rr[m].operand = reinterpret_cast<const uint8_t*>(inPlace ? got[m].data() : mine[m].data());
      rr[m].dtype = DataType::kInt32;
      rr[m].op = RedOp::kSum;
      RANK_OK(ctx, t->post(next, &rs[m]));
      RANK_OK(ctx, t->post(prev, &rr[m]));
      all.push_back(&rs[m]);
      all.push_back(&rr[m]);
      *singles += kReduceSizes[m] >= kThreshold ? 1 : 0;
    }
    RANK_OK(ctx, drive(t, all, 20000));
    for (size_t m = 0; m < kReduceSizes.size(); ++m) {
      for (uint64_t i = 0; i < got[m].size(); ++i) {
        int32_t want = value(ctx.rank, i + m) + value(prev, i + m);
        RANK_CHECK(ctx, got[m][i] == want, "reduce ", m, (inPlace ? " in place" : ""), " element ",
                   i, " is ", got[m][i], ", expected ", want);
      }
    }
  }
  return "";
}

// Sets up a transport on n ranks, runs exchange() and then `check` (path and counters).
using PathCheck = std::function<std::string(RankCtx&, const ShmTransport&, uint64_t singles)>;
void runExchange(int n, const PathCheck& check) {
  expectAllOk(runRanks(n, [&](RankCtx& ctx) -> std::string {
    std::unique_ptr<Transport> t;
    RANK_OK(ctx, transport::createShmTransport(ctx.setupArgs(), &t));
    auto* shm = dynamic_cast<ShmTransport*>(t.get());
    RANK_CHECK(ctx, shm != nullptr);
    uint64_t singles = 0;
    std::string e = exchange(ctx, t.get(), &singles);
    if (e.empty()) e = check(ctx, *shm, singles);
    if (!e.empty()) return e;
    RANK_OK(ctx, ctx.barrier());
    return "";
  }));
}

TEST(ShmCma, ExactAroundTheThresholdWhenForcedOn) {
  auto env = cmaEnv("on");
  runExchange(3, [](RankCtx& ctx, const ShmTransport& shm, uint64_t singles) -> std::string {
    for (int p = 0; p < ctx.nranks; ++p)
      if (p != ctx.rank) RANK_CHECK(ctx, shm.singleCopyTo(p), "no single copy to rank ", p);
    RANK_CHECK(ctx, shm.singleCopyReceived() == singles, shm.singleCopyReceived(), " vs ", singles);
    return "";
  });
}

TEST(ShmCma, OffUsesTheRingAndStaysExact) {
  auto env = cmaEnv("off");
  runExchange(2, [](RankCtx& ctx, const ShmTransport& shm, uint64_t) -> std::string {
    RANK_CHECK(ctx, !shm.singleCopyTo(1 - ctx.rank));
    RANK_CHECK(ctx, shm.singleCopyReceived() == 0, shm.singleCopyReceived());
    return "";
  });
}

// Rank 1 cannot read rank 0's memory: 0 -> 1 falls back to the ring, 1 -> 0 stays single copy.
TEST(ShmCma, FailedProbeFallsBackForThatDirectionOnly) {
  auto env = cmaEnv("auto");
  ShmTransport::failCmaProbeForTesting(1);
  runExchange(2, [](RankCtx& ctx, const ShmTransport& shm, uint64_t singles) -> std::string {
    RANK_CHECK(ctx, shm.singleCopyTo(1 - ctx.rank) == (ctx.rank == 1));
    RANK_CHECK(ctx, shm.singleCopyReceived() == (ctx.rank == 0 ? singles : 0),
               shm.singleCopyReceived());
    return "";
  });
}

TEST(ShmCma, FailedProbeWithOnFailsSetupOnEveryRank) {
  auto env = cmaEnv("on");
  ShmTransport::failCmaProbeForTesting(-2);
  auto out = runRanks(2, [&](RankCtx& ctx) -> std::string {
    std::unique_ptr<Transport> t;
    Status st = transport::createShmTransport(ctx.setupArgs(), &t);
    RANK_CHECK(ctx, !st.ok());
    RANK_CHECK(ctx,
               contains(st.message(), "LOOM_SHM_CMA=on") || contains(st.message(), "failed on"),
               st.message());
    RANK_CHECK(ctx, leftoverSegments(ctx.tag).empty());
    return "";
  });
  expectAllOk(out);
}

TEST(ShmCma, BadParametersAreNamed) {
  for (auto [k, v] :
       {std::pair{"LOOM_SHM_CMA", "sometimes"}, std::pair{"LOOM_SHM_CMA_THRESHOLD", "-1"}}) {
    ScopedEnv env(std::vector<std::pair<std::string, std::string>>{{k, v}});
    std::string name = k;
    auto out = runRanks(2, [&](RankCtx& ctx) -> std::string {
      std::unique_ptr<Transport> t;
      Status st = transport::createShmTransport(ctx.setupArgs(), &t);
      RANK_CHECK(ctx, st.code() == Code::kInvalidArgument, st.toString());
      RANK_CHECK(ctx, contains(st.message(), name + "="), st.message());
      return "";
    });
    expectAllOk(out);
  }
}

// The sender publishes a single-copy descriptor and is killed before the receiver reads it: the
// read fails (ESRCH) and the receiver reports the sender as died, promptly.
TEST(ShmCma, SenderKilledBeforeTheReadIsReportedAsDied) {
  auto env = cmaEnv("on");
  auto out = runRanks(2, [&](RankCtx& ctx) -> std::string {
    std::unique_ptr<Transport> t;
    RANK_OK(ctx, transport::createShmTransport(ctx.setupArgs(), &t));
    std::vector<uint8_t> buf(8 << 20, 3);
    if (ctx.rank == 0) {
      Request s = makeSend(buf.data(), buf.size());
      RANK_OK(ctx, t->post(1, &s));
      bool moved = false;
      RANK_OK(ctx, t->progress(&moved));  // descriptor published
      ctx.arena->shared[1].store(static_cast<uint32_t>(getpid()));
      ctx.arena->shared[0].store(1);
      raise(SIGKILL);
    }
    auto t0 = Clock::now();
    while (ctx.arena->shared[0].load() == 0 && secondsSince(t0) < 10)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const int pid = static_cast<int>(ctx.arena->shared[1].load());
    while (!processGone(pid) && secondsSince(t0) < 10)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    t0 = Clock::now();
    Request r = makeRecv(buf.data(), buf.size());
    RANK_OK(ctx, t->post(0, &r));
    Status st = drive(t.get(), {&r}, 20000);
    RANK_CHECK(ctx, st.code() == Code::kRemoteError, st.toString());
    RANK_CHECK(ctx, contains(st.message(), "peer rank 0 (host ") && contains(st.message(), "died"),
               st.message());
    RANK_CHECK(ctx, secondsSince(t0) < 5, "took ", secondsSince(t0), " s");
    return "";
  });
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].signal, SIGKILL);
  EXPECT_EQ(out[1].exitCode, 0) << out[1].message;
}

// The receiver dies without acknowledging: the sender, waiting for the acknowledgement, reports it.
TEST(ShmCma, ReceiverKilledBeforeTheAckIsReportedAsDied) {
  auto env = cmaEnv("on");
  auto out = runRanks(2, [&](RankCtx& ctx) -> std::string {
    std::unique_ptr<Transport> t;
    RANK_OK(ctx, transport::createShmTransport(ctx.setupArgs(), &t));
    RANK_OK(ctx, ctx.barrier());
    if (ctx.rank == 1) raise(SIGKILL);
    std::vector<uint8_t> buf(1 << 20, 5);
    Request s = makeSend(buf.data(), buf.size());
    RANK_OK(ctx, t->post(1, &s));
    auto t0 = Clock::now();
    Status st = drive(t.get(), {&s}, 20000);
    RANK_CHECK(ctx, st.code() == Code::kRemoteError, st.toString());
    RANK_CHECK(ctx, contains(st.message(), "peer rank 1 (host ") && contains(st.message(), "died"),
               st.message());
    RANK_CHECK(ctx, secondsSince(t0) < 5, "took ", secondsSince(t0), " s");
    return "";
  });
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].signal, SIGKILL);
  EXPECT_EQ(out[0].exitCode, 0) << out[0].message;
}

}  // namespace
}  // namespace loom::test

namespace loom::testing {
namespace {

// Every collective through the public API, with message sizes (segments of LOOM_CHUNK_BYTES-sized
// pipeline chunks) below, at and above the single-copy threshold, odd, in place and out of place.
std::string collectivesAroundThreshold(int rank, int p, loomComm_t comm) {
  using Check = std::function<std::string(uint64_t n, bool inPlace)>;
  const std::vector<std::pair<const char*, Check>> checks = {
      {"allreduce float32 sum",
       [&](uint64_t n, bool ip) { return allReduce(comm, rank, p, n, loomFloat32, loomSum, ip); }},
      {"allreduce int8 max",
       [&](uint64_t n, bool ip) { return allReduce(comm, rank, p, n, loomInt8, loomMax, ip); }},
      {"allreduce float64 avg",
       [&](uint64_t n, bool ip) { return allReduce(comm, rank, p, n, loomFloat64, loomAvg, ip); }},
      {"broadcast", [&](uint64_t n, bool ip) { return broadcast(comm, rank, p, n, ip); }},
      {"reduce", [&](uint64_t n, bool ip) { return reduce(comm, rank, p, n, ip); }},
      {"allgather", [&](uint64_t n, bool ip) { return allGather(comm, rank, p, n, ip); }},
      {"reducescatter", [&](uint64_t n, bool ip) { return reduceScatter(comm, rank, p, n, ip); }},
      {"alltoall",
       [&](uint64_t n, bool ip) { return ip ? std::string() : allToAll(comm, rank, p, n); }},
      {"send/recv",
       [&](uint64_t n, bool ip) { return ip ? std::string() : sendRecvRing(comm, rank, p, n); }},
  };
  for (uint64_t n : {1ull, 2047ull, 2048ull, 2049ull, 65536ull + 3}) {
    for (bool inPlace : {false, true}) {
      for (const auto& [name, check] : checks) {
        std::string e = check(n, inPlace);
        if (!e.empty())
          return std::string(name) + " n=" + std::to_string(n) + (inPlace ? " in place: " : ": ") +
                 e;
      }
    }
  }
  return "";
}

struct CmaCase {
  const char* name;
  const char* mode;
  const char* threshold;
  int failProbeRank;  // -1: none
};

class ShmCmaCollectives : public ::testing::TestWithParam<std::tuple<CmaCase, int>> {};

TEST_P(ShmCmaCollectives, EveryCollectiveExact) {
  auto [c, p] = GetParam();
  params::resetCacheForTesting();
  transport::shm::ShmTransport::failCmaProbeForTesting(c.failProbeRank);
  RankOptions opt;
  opt.transport = "shm";
  opt.env = {{"LOOM_SHM_CMA", c.mode},
             {"LOOM_SHM_CMA_THRESHOLD", c.threshold},
             {"LOOM_CHUNK_BYTES", "16384"}};
  EXPECT_EQ(failures(runRanks(p, collectivesAroundThreshold, opt)), "");
  if (p == 2 && std::string(c.mode) == "on") {  // plus one large all-reduce, many chunks
    auto large = [](int rank, int np, loomComm_t comm) {
      return allReduce(comm, rank, np, (1 << 20) + 1, loomFloat32, loomSum, true);
    };
    EXPECT_EQ(failures(runRanks(p, large, opt)), "");
  }
  transport::shm::ShmTransport::failCmaProbeForTesting(-1);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, ShmCmaCollectives,
    ::testing::Values(std::tuple{CmaCase{"on_4096", "on", "4096", -1}, 2},
                      std::tuple{CmaCase{"on_4096", "on", "4096", -1}, 3},
                      std::tuple{CmaCase{"on_1", "on", "1", -1}, 2},
                      std::tuple{CmaCase{"off", "off", "4096", -1}, 2},
                      std::tuple{CmaCase{"probe_fails_on_rank1", "auto", "4096", 1}, 3}),
    [](const auto& info) {
      return std::string(std::get<0>(info.param).name) + "_p" +
             std::to_string(std::get<1>(info.param));
    });

}  // namespace
}  // namespace loom::testing
