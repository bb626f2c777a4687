// Multi-process tests of the shm transport (forked ranks, see shm_harness.h).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include "core/params.h"
#include "shm_harness.h"

namespace loom::test {
namespace {

using transport::Request;
using transport::Transport;
using Clock = std::chrono::steady_clock;

void expectAllOk(const std::vector<RankOutcome>& out) {
  for (size_t r = 0; r < out.size(); ++r) {
    EXPECT_TRUE(out[r].exited && out[r].exitCode == 0)
        << "rank " << r << " exit " << out[r].exitCode << " signal " << out[r].signal << ": "
        << out[r].message;
  }
}

// Sets LOOM_SHM_BUFFER_BYTES in a child before the transport reads it.
void setRingBytes(const char* v) {
  setenv("LOOM_SHM_BUFFER_BYTES", v, 1);
  params::resetCacheForTesting();
}

class ShmSetup : public ::testing::TestWithParam<int> {};

TEST_P(ShmSetup, LeavesNothingInDevShmAndReportsCaps) {
  int n = GetParam();
  std::string tag;
  auto out = runRanks(n, [&](RankCtx& ctx) -> std::string {
    std::unique_ptr<Transport> t;
    RANK_OK(ctx, transport::createShmTransport(ctx.setupArgs(), &t));
    RANK_OK(ctx, ctx.barrier());  // every rank is past setup
    auto left = leftoverSegments(ctx.tag);
    RANK_CHECK(ctx, left.empty(), "left in /dev/shm: ", left.front());
    RANK_CHECK(ctx, std::string(t->caps().name) == "shm");
    RANK_CHECK(ctx, t->caps().intraNode && t->caps().bandwidthGBs > 0);
    RANK_OK(ctx, t->checkPeers());
    // One zero-byte message around the ring proves the segments are connected.
    Request s, rv;
    s.kind = Request::kSend;
    rv.kind = Request::kRecv;
    RANK_OK(ctx, t->post((ctx.rank + 1) % n, &s));
    RANK_OK(ctx, t->post((ctx.rank + n - 1) % n, &rv));
    RANK_OK(ctx, drive(t.get(), {&s, &rv}, 20000));
    RANK_OK(ctx, ctx.barrier());  // nobody exits while another still checks its peers
    return "";
  });
  expectAllOk(out);
}
INSTANTIATE_TEST_SUITE_P(Ranks, ShmSetup, ::testing::Values(2, 3, 8));

// Every rank sends every size to every peer and receives the same, all posted before any progress.
class ShmExchange : public ::testing::TestWithParam<int> {};

TEST_P(ShmExchange, AllSizesBothDirectionsFifo) {
  const std::vector<uint64_t> sizes = {0, 1, 63, 4096, (10ull << 20) + 3, 0, 64, 1};
  auto out = runRanks(GetParam(), [&](RankCtx& ctx) -> std::string {
    std::unique_ptr<Transport> t;
    RANK_OK(ctx, transport::createShmTransport(ctx.setupArgs(), &t));
    std::vector<std::unique_ptr<Request>> reqs;
    std::vector<std::vector<uint8_t>> bufs;
    std::vector<Request*> all;
    for (int peer = 0; peer < ctx.nranks; ++peer) {
      if (peer == ctx.rank) continue;
      for (size_t m = 0; m < sizes.size(); ++m) {
        for (auto kind : {Request::kSend, Request::kRecv}) {
          bufs.emplace_back(sizes[m] + 1, 0xEE);  // one guard byte
          auto r = std::make_unique<Request>();
          r->kind = kind;
          r->bytes = sizes[m];
          if (kind == Request::kSend) {
            fillPattern(bufs.back().data(), sizes[m], ctx.rank, peer, m);
            r->src = bufs.back().data();
          } else {
            r->dst = bufs.back().data();
          }
          RANK_OK(ctx, t->post(peer, r.get()));
          all.push_back(r.get());
          reqs.push_back(std::move(r));
        }
      }
    }
    RANK_OK(ctx, drive(t.get(), all, 60000));
    size_t i = 0;
    for (int peer = 0; peer < ctx.nranks; ++peer) {
      if (peer == ctx.rank) continue;
      for (size_t m = 0; m < sizes.size(); ++m, i += 2) {
        const auto& got = bufs[i + 1];
        RANK_CHECK(ctx, reqs[i + 1]->doneBytes == sizes[m] && reqs[i]->doneBytes == sizes[m]);
        std::string bad = checkPattern(got.data(), sizes[m], peer, ctx.rank, m);
        RANK_CHECK(ctx, bad.empty(), bad);
        RANK_CHECK(ctx, got[sizes[m]] == 0xEE, "guard byte overwritten, message ", m);
      }
    }
    return "";
  });
  expectAllOk(out);
}
INSTANTIATE_TEST_SUITE_P(Ranks, ShmExchange, ::testing::Values(2, 3));

TEST(ShmTransport, ThousandsOfQueuedMessagesStayInOrderThroughATinyRing) {
  constexpr int kMsgs = 3000;
  auto out = runRanks(2, [&](RankCtx& ctx) -> std::string {
    setRingBytes("4096");
    std::unique_ptr<Transport> t;
    RANK_OK(ctx, transport::createShmTransport(ctx.setupArgs(), &t));
    int peer = 1 - ctx.rank;
    std::vector<Request> sends(kMsgs), recvs(kMsgs);
    std::vector<std::vector<uint8_t>> in(kMsgs), outb(kMsgs);
    std::vector<Request*> all;
    for (int m = 0; m < kMsgs; ++m) {
      uint64_t n = (m * 37) % 9000;  // 0 .. 8999 bytes: some larger than the ring
      outb[m].resize(n);
      in[m].resize(n);
      fillPattern(outb[m].data(), n, ctx.rank, peer, m);
      sends[m].kind = Request::kSend;
      sends[m].src = outb[m].data();
      sends[m].bytes = n;
      recvs[m].kind = Request::kRecv;
      recvs[m].dst = in[m].data();
      recvs[m].bytes = n;
      RANK_OK(ctx, t->post(peer, &sends[m]));
      RANK_OK(ctx, t->post(peer, &recvs[m]));
      all.push_back(&sends[m]);
      all.push_back(&recvs[m]);
    }
    RANK_OK(ctx, drive(t.get(), all, 60000));
    for (int m = 0; m < kMsgs; ++m) {
      std::string bad = checkPattern(in[m].data(), in[m].size(), peer, ctx.rank, m);
      RANK_CHECK(ctx, bad.empty(), bad);
    }
    return "";
  });
  expectAllOk(out);
}

// Regression: a receiver that consumed a message's last bytes before the sender published the
// padded head once read the next header before it was written.
TEST(ShmTransport, PingPongOfOddSizes) {
  constexpr int kIters = 3000;
  auto out = runRanks(2, [&](RankCtx& ctx) -> std::string {
    std::unique_ptr<Transport> t;
    RANK_OK(ctx, transport::createShmTransport(ctx.setupArgs(), &t));
    int peer = 1 - ctx.rank;
    std::vector<uint8_t> in(200), outb(200);
    for (int m = 0; m < kIters; ++m) {
      uint64_t n = 1 + (m * 7) % 150;
      fillPattern(outb.data(), n, ctx.rank, peer, m);
      Request s, r;
      s.kind = Request::kSend;
      s.src = outb.data();
      s.bytes = n;
      r.kind = Request::kRecv;
      r.dst = in.data();
      r.bytes = n;
      if (ctx.rank == 0) {
        RANK_OK(ctx, t->post(peer, &s));
        RANK_OK(ctx, drive(t.get(), {&s}, 20000));
      }
      RANK_OK(ctx, t->post(peer, &r));
      RANK_OK(ctx, drive(t.get(), {&r}, 20000));
      std::string bad = checkPattern(in.data(), n, peer, ctx.rank, m);
      RANK_CHECK(ctx, bad.empty(), bad);
      if (ctx.rank == 1) {
        RANK_OK(ctx, t->post(peer, &s));
        RANK_OK(ctx, drive(t.get(), {&s}, 20000));
      }
    }
    return "";
  });
  expectAllOk(out);
}

// Ring pass with reduce-on-arrival: rank r sends x_r to r+1 and receives dst = mine + x_{r-1}.
TEST(ShmTransport, ReduceOnArrivalFloatSum) {
  const std::vector<size_t> counts = {0, 1, 15, 1000,
                                      3 * (1 << 20) + 5};  // last > the ring (1 MiB)
  auto out = runRanks(3, [&](RankCtx& ctx) -> std::string {
    std::unique_ptr<Transport> t;
    RANK_OK(ctx, transport::createShmTransport(ctx.setupArgs(), &t));
    int next = (ctx.rank + 1) % ctx.nranks, prev = (ctx.rank + ctx.nranks - 1) % ctx.nranks;
    auto value = [](int rank, size_t i) { return static_cast<float>((i % 1000) + rank * 1000); };
    for (bool inPlace : {false, true}) {
      for (size_t count : counts) {
        std::vector<float> send(count), mine(count), dst(count, -1.f);
        for (size_t i = 0; i < count; ++i) {
          send[i] = value(ctx.rank, i);
          mine[i] = 0.5f + static_cast<float>(i % 7);
        }
        Request s, r;
        s.kind = Request::kSend;
        s.src = reinterpret_cast<const uint8_t*>(send.data());
        s.bytes = count * sizeof(float);
        r.kind = Request::kRecv;
        r.dst = reinterpret_cast<uint8_t*>(inPlace ? mine.data() : dst.data());
        r.operand = reinterpret_cast<const uint8_t*>(mine.data());
        r.dtype = DataType::kFloat32;
        r.op = RedOp::kSum;
        r.bytes = count * sizeof(float);
        RANK_OK(ctx, t->post(next, &s));
        RANK_OK(ctx, t->post(prev, &r));
        RANK_OK(ctx, drive(t.get(), {&s, &r}, 60000));
        const float* res = inPlace ? mine.data() : dst.data();
        for (size_t i = 0; i < count; ++i) {
          float want = 0.5f + static_cast<float>(i % 7) + value(prev, i);
          RANK_CHECK(ctx, res[i] == want, "count ", count, " inPlace ", inPlace, " element ", i,
                     ": ", res[i], " != ", want);
        }
        if (!inPlace) {
          for (size_t i = 0; i < count; ++i)
            RANK_CHECK(ctx, mine[i] == 0.5f + static_cast<float>(i % 7), "operand modified");
        }
      }
    }
    return "";
  });
  expectAllOk(out);
}

// A rank spinning in wait() hears of each slice its peer publishes, not only when the peer's
// progress() returns. Rank 1 sends 256 KiB and then, in the same progress() call, reduces a
// 16 MiB message that is already in its ring (milliseconds); rank 0, spinning for the 256 KiB,
// must have it while that call still runs. Before 2026-12-04 a spinning peer was rung only at the
// end of progress(), so the rank that was ahead idled through the other's whole receive: the
// 2-rank 1 MiB out-of-place ring all-reduce took 62-64 us instead of 35 on the 2-vCPU VM.
// Tried up to 5 times (rank 0 may not get a core in time on a loaded machine); before the
// change every try fails.
TEST(ShmTransport, SpinningWaiterGetsASliceWhileThePeersProgressStillRuns) {
  constexpr size_t kBig = 16 << 20, kSmall = 256 << 10;
  auto out = runRanks(2, [&](RankCtx& ctx) -> std::string {
    setenv("LOOM_SPIN_US", "30000000", 1);  // rank 0 spins the whole time, never sleeps
    setRingBytes("25165824");               // 24 MiB: the 16 MiB message fits
    std::unique_ptr<Transport> t;
    RANK_OK(ctx, transport::createShmTransport(ctx.setupArgs(), &t));
    std::atomic<uint32_t>& inProgress = ctx.arena->shared[0];
    std::atomic<uint32_t>& overlapped = ctx.arena->shared[1];
    std::vector<float> big(kBig / sizeof(float), 1.5f), dst(kBig / sizeof(float), 0.f);
    std::vector<uint8_t> small(kSmall, 7), got(kSmall, 0);
    for (int attempt = 0; attempt < 5 && overlapped.load() == 0; ++attempt) {
      if (ctx.rank == 0) {
        Request s;
        s.kind = Request::kSend;
        s.src = reinterpret_cast<const uint8_t*>(big.data());
        s.bytes = kBig;
        RANK_OK(ctx, t->post(1, &s));
        RANK_OK(ctx, drive(t.get(), {&s}, 60000));  // fits the ring: done without rank 1
        RANK_OK(ctx, ctx.barrier());
        Request r;
        r.kind = Request::kRecv;
        r.dst = got.data();
        r.bytes = kSmall;
        RANK_OK(ctx, t->post(1, &r));
        auto deadline = Clock::now() + std::chrono::seconds(60);
        while (!r.complete) {
          bool moved = false;
          RANK_OK(ctx, t->progress(&moved));
          if (!moved && !r.complete) RANK_OK(ctx, t->wait(20000));
          RANK_CHECK(ctx, Clock::now() < deadline, "256 KiB from rank 1 not in 60 s");
        }
        if (inProgress.load() == 1) overlapped.store(1);
        RANK_CHECK(ctx, got == small, "wrong bytes");
      } else {
        RANK_OK(ctx, ctx.barrier());
        Request s, r;
        s.kind = Request::kSend;
        s.src = small.data();
        s.bytes = kSmall;
        r.kind = Request::kRecv;
        r.dst = reinterpret_cast<uint8_t*>(dst.data());
        r.operand = reinterpret_cast<const uint8_t*>(big.data());
        r.dtype = DataType::kFloat32;
        r.op = RedOp::kSum;
        r.bytes = kBig;
        RANK_OK(ctx, t->post(0, &s));
        RANK_OK(ctx, t->post(0, &r));
        inProgress.store(1);
        bool moved = false;
        RANK_OK(ctx, t->progress(&moved));  // sends, then reduces all 16 MiB
        inProgress.store(0);
        RANK_CHECK(ctx, r.complete, "the 16 MiB were in the ring but one progress() left them");
        RANK_OK(ctx, drive(t.get(), {&s, &r}, 60000));
        RANK_CHECK(ctx, dst.front() == 3.f && dst.back() == 3.f, dst.front(), " ", dst.back());
      }
      RANK_OK(ctx, ctx.barrier());
    }
    RANK_CHECK(ctx, overlapped.load() == 1,
               "in 5 tries rank 0 never got rank 1's first slice before rank 1's progress() ended");
    return "";
  });
  expectAllOk(out);
}

// Reduction pieces end wherever the ring wraps: float64 max through a 4 KiB ring, odd count.
TEST(ShmTransport, ReduceOnArrivalThroughTinyRingFloat64Max) {
  constexpr size_t kCount = 30001;
  auto out = runRanks(2, [&](RankCtx& ctx) -> std::string {
    setRingBytes("4096");
    std::unique_ptr<Transport> t;
    RANK_OK(ctx, transport::createShmTransport(ctx.setupArgs(), &t));
    int peer = 1 - ctx.rank;
    auto value = [](int rank, size_t i) { return ((i * 7 + rank * 3) % 11) - 5.25; };
    std::vector<double> send(kCount), mine(kCount);
    for (size_t i = 0; i < kCount; ++i) {
      send[i] = value(ctx.rank, i);
      mine[i] = value(ctx.rank + 5, i);
    }
    std::vector<double> expect(kCount);
    for (size_t i = 0; i < kCount; ++i) expect[i] = std::max(mine[i], value(peer, i));
    Request s, r;
    s.kind = Request::kSend;
    s.src = reinterpret_cast<const uint8_t*>(send.data());
    s.bytes = kCount * sizeof(double);
    r.kind = Request::kRecv;
    r.dst = reinterpret_cast<uint8_t*>(mine.data());  // in place
    r.operand = r.dst;
    r.dtype = DataType::kFloat64;
    r.op = RedOp::kMax;
    r.bytes = s.bytes;
    RANK_OK(ctx, t->post(peer, &s));
    RANK_OK(ctx, t->post(peer, &r));
    RANK_OK(ctx, drive(t.get(), {&s, &r}, 60000));
    for (size_t i = 0; i < kCount; ++i)
      RANK_CHECK(ctx, mine[i] == expect[i], "element ", i, ": ", mine[i], " != ", expect[i]);
    return "";
  });
  expectAllOk(out);
}

TEST(ShmTransport, EightRanksAllToAllStressIsPromptOnTwoCores) {
  constexpr int kRanks = 8, kMsgs = 24;
  auto t0 = Clock::now();
  auto out = runRanks(kRanks, [&](RankCtx& ctx) -> std::string {
    setRingBytes("65536");
    std::unique_ptr<Transport> t;
    RANK_OK(ctx, transport::createShmTransport(ctx.setupArgs(), &t));
    std::vector<std::unique_ptr<Request>> reqs;
    std::vector<std::vector<uint8_t>> bufs;
    std::vector<Request*> all;
    std::vector<int> meta;  // peer * kMsgs + m, of each receive
    for (int m = 0; m < kMsgs; ++m) {
      for (int d = 1; d < kRanks; ++d) {
        for (auto kind : {Request::kSend, Request::kRecv}) {
          int peer =
              kind == Request::kSend ? (ctx.rank + d) % kRanks : (ctx.rank + kRanks - d) % kRanks;
          uint64_t n = (m % 3 == 0) ? 300000 + m : (m * 4099) % 20000;
          bufs.emplace_back(n);
          auto r = std::make_unique<Request>();
          r->kind = kind;
          r->bytes = n;
          if (kind == Request::kSend) {
            fillPattern(bufs.back().data(), n, ctx.rank, peer, m);
            r->src = bufs.back().data();
          } else {
            r->dst = bufs.back().data();
            meta.push_back(static_cast<int>(bufs.size() - 1));
            meta.push_back(peer * kMsgs + m);
          }
          RANK_OK(ctx, t->post(peer, r.get()));
          all.push_back(r.get());
          reqs.push_back(std::move(r));
        }
      }
    }
    RANK_OK(ctx, drive(t.get(), all, 60000));
    for (size_t i = 0; i < meta.size(); i += 2) {
      const auto& b = bufs[meta[i]];
      std::string bad =
          checkPattern(b.data(), b.size(), meta[i + 1] / kMsgs, ctx.rank, meta[i + 1] % kMsgs);
      RANK_CHECK(ctx, bad.empty(), bad);
    }
    return "";
  });
  double secs = secondsSince(t0);
  expectAllOk(out);
  // About 8 * 7 * 24 messages, 8 * 7 * 8 * 300 kB = 134 MB moved through 64 KiB rings.
  std::printf("[ shm ] 8-rank all-to-all stress: %.2f s\n", secs);
  EXPECT_LT(secs, 30.0) << "8 ranks on this machine must progress promptly";
}

}  // namespace
}  // namespace loom::test
