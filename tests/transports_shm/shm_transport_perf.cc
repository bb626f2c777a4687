// Bandwidth of a 2-process stream through the shm transport against one core's memcpy, and the
// round trip of a 8-byte message. Prints numbers; asserts only that the data arrived intact.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "shm_harness.h"

namespace loom::test {
namespace {

using transport::Request;
using transport::Transport;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kBytes = 64ull << 20;
constexpr int kReps = 5;

double memcpyGBs() {
  std::vector<uint8_t> a(kBytes, 1), b(kBytes, 2);
  double best = 0;
  for (int i = 0; i < kReps; ++i) {
    auto t0 = Clock::now();
    std::memcpy(b.data(), a.data(), kBytes);
    best = std::max(best, kBytes / secondsSince(t0) / 1e9);
    a[i] = b[i + 1];
  }
  return best;
}

TEST(ShmPerf, Stream64MiBVersusMemcpyAndPingPongLatency) {
  double copy = memcpyGBs();
  auto out = runRanks(2, [&](RankCtx& ctx) -> std::string {
    std::unique_ptr<Transport> t;
    RANK_OK(ctx, transport::createShmTransport(ctx.setupArgs(), &t));
    std::vector<uint8_t> buf(kBytes);
    if (ctx.rank == 0) fillPattern(buf.data(), kBytes, 0, 1, 0);
    double best = 0;
    for (int i = 0; i < kReps; ++i) {
      RANK_OK(ctx, ctx.barrier());
      auto t0 = Clock::now();
      Request r;
      r.kind = ctx.rank == 0 ? Request::kSend : Request::kRecv;
      r.src = buf.data();
      r.dst = buf.data();
      r.bytes = kBytes;
      RANK_OK(ctx, t->post(1 - ctx.rank, &r));
      RANK_OK(ctx, drive(t.get(), {&r}, 60000));
      Request ack;  // zero-byte ack: the receiver has all the data
      ack.kind = ctx.rank == 0 ? Request::kRecv : Request::kSend;
      RANK_OK(ctx, t->post(1 - ctx.rank, &ack));
      RANK_OK(ctx, drive(t.get(), {&ack}, 60000));
      best = std::max(best, kBytes / secondsSince(t0) / 1e9);
    }
    if (ctx.rank == 1) {
      std::string bad = checkPattern(buf.data(), kBytes, 0, 1, 0);
      RANK_CHECK(ctx, bad.empty(), bad);
    }
    constexpr int kIters = 20000;
    uint64_t word = 0;
    RANK_OK(ctx, ctx.barrier());
    auto t0 = Clock::now();
    for (int i = 0; i < kIters; ++i) {
      Request s, r;
      s.kind = Request::kSend;
      s.src = reinterpret_cast<uint8_t*>(&word);
      s.bytes = 8;
      r.kind = Request::kRecv;
      r.dst = reinterpret_cast<uint8_t*>(&word);
      r.bytes = 8;
      if (ctx.rank == 0) {
        RANK_OK(ctx, t->post(1, &s));
        RANK_OK(ctx, t->post(1, &r));
        RANK_OK(ctx, drive(t.get(), {&s, &r}, 60000));
      } else {
        RANK_OK(ctx, t->post(0, &r));
        RANK_OK(ctx, drive(t.get(), {&r}, 60000));
        RANK_OK(ctx, t->post(0, &s));
        RANK_OK(ctx, drive(t.get(), {&s}, 60000));
      }
    }
    double halfRtt = secondsSince(t0) / kIters / 2 * 1e6;
    if (ctx.rank == 0) {
      std::printf("[ shm ] 2-process stream of 64 MiB: %.2f GB/s (best of %d)\n", best, kReps);
      std::printf("[ shm ] 8-byte ping-pong: %.2f us one way\n", halfRtt);
    }
    return "";
  });
  for (auto& o : out) EXPECT_EQ(o.exitCode, 0) << o.message;
  std::printf("[ shm ] memcpy of 64 MiB on one core: %.2f GB/s (best of %d)\n", copy, kReps);
}

}  // namespace
}  // namespace loom::test
