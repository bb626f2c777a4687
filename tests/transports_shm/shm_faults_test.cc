// Fault and wait behaviour of the shm transport: dead, closed and aborted peers, wake(), setup
// failures, bad arguments, and that waiting sleeps (futex) instead of spinning.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <thread>

#include "shm_harness.h"

namespace loom::test {
namespace {

using transport::Request;
using transport::Transport;
using Clock = std::chrono::steady_clock;

double cpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

TEST(ShmFaults, SigkilledPeerIsReportedByRankAndPid) {
  std::string tag;
  auto out = runRanks(3, [&](RankCtx& ctx) -> std::string {
    std::unique_ptr<Transport> t;
    RANK_OK(ctx, transport::createShmTransport(ctx.setupArgs(), &t));
    RANK_OK(ctx, ctx.barrier());
    if (ctx.rank == 1) raise(SIGKILL);
    // Rank 0 waits for data from the dead rank; rank 2 streams more than the ring holds to it.
    std::vector<uint8_t> buf(16 << 20, 1);
    Request r = ctx.rank == 0 ? makeRecv(buf.data(), 1 << 20) : makeSend(buf.data(), buf.size());
    RANK_OK(ctx, t->post(1, &r));
    auto t0 = Clock::now();
    Status st = drive(t.get(), {&r}, 20000);
    double secs = secondsSince(t0);
    RANK_CHECK(ctx, st.code() == Code::kRemoteError, st.toString());
    RANK_CHECK(ctx, contains(st.message(), "peer rank 1 (host ") && contains(st.message(), "died"),
               st.message());
    RANK_CHECK(ctx, secs < 5, "took ", secs, " s");
    auto left = leftoverSegments(ctx.tag);
    RANK_CHECK(ctx, left.empty(), "left in /dev/shm: ", left.front());
    return "";
  });
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].signal, SIGKILL);
  for (int r : {0, 2}) EXPECT_EQ(out[r].exitCode, 0) << out[r].message;
}

TEST(ShmFaults, WakeInterruptsWaitAndAbortReachesThePeer) {
  auto out = runRanks(2, [&](RankCtx& ctx) -> std::string {
    std::atomic<bool> abort{false};
    std::unique_ptr<Transport> t;
    RANK_OK(ctx, transport::createShmTransport(ctx.setupArgs({}, 20000, &abort), &t));
    uint8_t byte = 0;
    if (ctx.rank == 0) {
      // wake() without abort cuts a long wait short.
      bool progressed;
      RANK_OK(ctx, t->progress(&progressed));
      std::thread waker([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        t->wake();
      });
      auto t0 = Clock::now();
      RANK_OK(ctx, t->wait(10'000'000));
      double secs = secondsSince(t0);
      waker.join();
      RANK_CHECK(ctx, secs < 1.0, "wait took ", secs, " s after wake()");
      // Abort from another thread while a receive waits for a message that never comes.
      Request r = makeRecv(&byte, 1);
      RANK_OK(ctx, t->post(1, &r));
      std::thread aborter([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        abort = true;
        t->wake();
      });
      t0 = Clock::now();
      Status st = drive(t.get(), {&r}, 20000, &abort);
      secs = secondsSince(t0);
      aborter.join();
      RANK_CHECK(ctx, contains(st.message(), "aborted"), st.toString());
      RANK_CHECK(ctx, secs < 1.2, "abort took ", secs, " s");
    } else {
      // The peer of the aborted rank hears about it from shared memory, not from a timeout.
      Request r = makeRecv(&byte, 1);
      RANK_OK(ctx, t->post(0, &r));
      Status st = drive(t.get(), {&r}, 20000);
      RANK_CHECK(ctx, st.code() == Code::kRemoteError, st.toString());
      RANK_CHECK(ctx, contains(st.message(), "peer rank 0") && contains(st.message(), "aborted"),
                 st.message());
    }
    return "";
  });
  for (auto& o : out) EXPECT_EQ(o.exitCode, 0) << o.message;
}

TEST(ShmFaults, ClosedPeerDeliversItsLastDataThenIsReported) {
  auto out = runRanks(2, [&](RankCtx& ctx) -> std::string {
    std::unique_ptr<Transport> t;
    RANK_OK(ctx, transport::createShmTransport(ctx.setupArgs(), &t));
    std::vector<uint8_t> data(1000);
    fillPattern(data.data(), data.size(), 1, 0, 0);
    if (ctx.rank == 1) {
      Request s = makeSend(data.data(), data.size());
      RANK_OK(ctx, t->post(0, &s));
      RANK_OK(ctx, drive(t.get(), {&s}, 20000));  // in the ring, not yet received
      t.reset();
      RANK_OK(ctx, ctx.barrier());
      return "";
    }
    RANK_OK(ctx, ctx.barrier());  // rank 1 has closed
    std::vector<uint8_t> got(1000);
    Request r1 = makeRecv(got.data(), got.size()), r2 = makeRecv(got.data(), 10);
    RANK_OK(ctx, t->post(1, &r1));
    RANK_OK(ctx, t->post(1, &r2));
    Status st = drive(t.get(), {&r1, &r2}, 20000);
    RANK_CHECK(ctx, r1.complete, "data sent before close was lost: ", st.toString());
    RANK_CHECK(ctx, checkPattern(got.data(), 1000, 1, 0, 0).empty());
    RANK_CHECK(ctx,
               st.code() == Code::kRemoteError && contains(st.message(), "peer rank 1") &&
                   contains(st.message(), "closed"),
               st.toString());
    return "";
  });
  for (auto& o : out) EXPECT_EQ(o.exitCode, 0) << o.message;
}

// A process forked after setup (a data-loader worker) that tears down its copy must not make
// the parent look closed to its peers.
TEST(ShmFaults, ForkedChildDoesNotCloseTheParentsTransport) {
  auto out = runRanks(2, [&](RankCtx& ctx) -> std::string {
    std::unique_ptr<Transport> t;
    RANK_OK(ctx, transport::createShmTransport(ctx.setupArgs(), &t));
    if (ctx.rank == 0) {
      pid_t child = fork();
      if (child == 0) {
        t.reset();
        _exit(0);
      }
      int status = 0;
      waitpid(child, &status, 0);
    }
    RANK_OK(ctx, ctx.barrier());
    RANK_OK(ctx, t->checkPeers());
    uint8_t out = 5, in = 0;
    Request s = makeSend(&out, 1), r = makeRecv(&in, 1);
    RANK_OK(ctx, t->post(1 - ctx.rank, &s));
    RANK_OK(ctx, t->post(1 - ctx.rank, &r));
    RANK_OK(ctx, drive(t.get(), {&s, &r}, 20000));
    RANK_CHECK(ctx, in == 5);
    RANK_OK(ctx, ctx.barrier());
    return "";
  });
  for (auto& o : out) EXPECT_EQ(o.exitCode, 0) << o.message;
}

TEST(ShmFaults, SizeMismatchNamesPeerAndSizes) {
  auto out = runRanks(2, [&](RankCtx& ctx) -> std::string {
    std::unique_ptr<Transport> t;
    RANK_OK(ctx, transport::createShmTransport(ctx.setupArgs(), &t));
    std::vector<uint8_t> buf(100);
    Request r = ctx.rank == 0 ? makeSend(buf.data(), 100) : makeRecv(buf.data(), 64);
    RANK_OK(ctx, t->post(1 - ctx.rank, &r));
    Status st = drive(t.get(), {&r}, 20000);
    if (ctx.rank == 0) {
      RANK_OK(ctx, st);
    } else {
      RANK_CHECK(ctx,
                 st.code() == Code::kInvalidUsage && contains(st.message(), "peer rank 0") &&
                     contains(st.message(), "100 bytes") && contains(st.message(), "64"),
                 st.toString());
    }
    RANK_OK(ctx, ctx.barrier());
    return "";
  });
  for (auto& o : out) EXPECT_EQ(o.exitCode, 0) << o.message;
}

TEST(ShmFaults, PostRejectsBadArguments) {
  auto out = runRanks(2, [&](RankCtx& ctx) -> std::string {
    std::unique_ptr<Transport> t;
    RANK_OK(ctx, transport::createShmTransport(ctx.setupArgs(), &t));
    uint8_t b[8];
    Request ok = makeSend(b, 8);
    RANK_CHECK(ctx, t->post(ctx.rank, &ok).code() == Code::kInvalidArgument);
    RANK_CHECK(ctx, t->post(7, &ok).code() == Code::kInvalidArgument);
    RANK_CHECK(ctx, t->post(1 - ctx.rank, nullptr).code() == Code::kInvalidArgument);
    Request noSrc = makeSend(nullptr, 8);
    RANK_CHECK(ctx, t->post(1 - ctx.rank, &noSrc).code() == Code::kInvalidArgument);
    Request odd = makeRecv(b, 6);
    odd.operand = b;
    odd.dtype = DataType::kFloat32;
    Status st = t->post(1 - ctx.rank, &odd);
    RANK_CHECK(ctx, st.code() == Code::kInvalidArgument && contains(st.message(), "float32"),
               st.toString());
    return "";
  });
  for (auto& o : out) EXPECT_EQ(o.exitCode, 0) << o.message;
}

TEST(ShmFaults, FailedSetupOnOneRankFailsAllAndUnlinksEverything) {
  std::string tag;
  auto out = runRanks(3, [&](RankCtx& ctx) -> std::string {
    auto args = ctx.setupArgs();
    if (ctx.rank == 2) args.ids[0].pid += 100000;  // rank 2 will reject rank 0's segment
    std::unique_ptr<Transport> t;
    Status st = transport::createShmTransport(args, &t);
    RANK_CHECK(ctx, !st.ok() && !t, "setup succeeded");
    if (ctx.rank == 2) {
      RANK_CHECK(ctx, contains(st.message(), "rank 0"), st.toString());
    } else {
      RANK_CHECK(ctx, contains(st.message(), "rank 2"), st.toString());
    }
    RANK_OK(ctx, ctx.barrier());
    auto left = leftoverSegments(ctx.tag);
    RANK_CHECK(ctx, left.empty(), "left in /dev/shm: ", left.front());
    return "";
  });
  for (auto& o : out) EXPECT_EQ(o.exitCode, 0) << o.message;
}

// A rank killed half way through setup (segment created, not yet unlinked): the survivors'
// setup fails and they unlink every name, the dead rank's included.
TEST(ShmFaults, RankKilledDuringSetupLeavesNoSegment) {
  auto out = runRanks(3, [&](RankCtx& ctx) -> std::string {
    auto args = ctx.setupArgs();
    ctx.barrierTimeoutMs = 1000;
    if (ctx.rank == 1) {
      auto inner = args.allGather;
      auto calls = std::make_shared<int>(0);
      args.allGather = [inner, calls](void* d, size_t b) {
        if (++*calls == 2) raise(SIGKILL);  // after "create", before "map" completes
        return inner(d, b);
      };
    }
    std::unique_ptr<Transport> t;
    Status st = transport::createShmTransport(args, &t);
    RANK_CHECK(ctx, !st.ok() && !t, "setup succeeded");
    auto left = leftoverSegments(ctx.tag);
    RANK_CHECK(ctx, left.empty(), "left in /dev/shm: ", left.front());
    return "";
  });
  EXPECT_EQ(out[1].signal, SIGKILL);
  for (int r : {0, 2}) EXPECT_EQ(out[r].exitCode, 0) << out[r].message;
}

// Only rank 1 sees its peer on another host: it fails with InvalidArgument, and rank 0 learns of
// it in the first setup round instead of timing out.
TEST(ShmFaults, RejectsPeerOnAnotherHostAndTellsTheOthers) {
  auto out = runRanks(2, [&](RankCtx& ctx) -> std::string {
    auto args = ctx.setupArgs();
    ctx.barrierTimeoutMs = 5000;
    if (ctx.rank == 1) args.ids[0].bootId = "another-machine";
    std::unique_ptr<Transport> t;
    auto t0 = Clock::now();
    Status st = transport::createShmTransport(args, &t);
    if (ctx.rank == 1) {
      RANK_CHECK(ctx,
                 st.code() == Code::kInvalidArgument && contains(st.message(), "not on the host"),
                 st.toString());
    } else {
      RANK_CHECK(ctx, st.code() == Code::kRemoteError && contains(st.message(), "rank 1"),
                 st.toString());
      RANK_CHECK(ctx, secondsSince(t0) < 2, "took ", secondsSince(t0), " s");
    }
    return "";
  });
  for (auto& o : out) EXPECT_EQ(o.exitCode, 0) << o.message;
}

// A receiver asleep in wait() is woken by the sender's doorbell within milliseconds, and an idle
// wait sleeps instead of burning the CPU.
TEST(ShmFaults, DoorbellWakesSleeperAndIdleWaitSleeps) {
  auto out = runRanks(2, [&](RankCtx& ctx) -> std::string {
    std::unique_ptr<Transport> t;
    RANK_OK(ctx, transport::createShmTransport(ctx.setupArgs(), &t));
    uint8_t byte = 42;
    if (ctx.rank == 1) {
      Request r = makeRecv(&byte, 1);
      RANK_OK(ctx, t->post(0, &r));
      bool progressed;
      RANK_OK(ctx, t->progress(&progressed));
      double cpu0 = cpuSeconds();
      auto t0 = Clock::now();
      RANK_OK(ctx, t->wait(300'000));  // nothing arrives: sleeps ~0.3 s
      double idle = secondsSince(t0), idleCpu = cpuSeconds() - cpu0;
      RANK_CHECK(ctx, idle > 0.25 && idleCpu < 0.05, "idle wait ", idle, " s used ", idleCpu,
                 " s CPU");
      RANK_OK(ctx, ctx.barrier());  // rank 0 sends 100 ms after this
      RANK_OK(ctx, t->progress(&progressed));
      t0 = Clock::now();
      while (!r.complete && secondsSince(t0) < 5) {
        RANK_OK(ctx, t->wait(5'000'000));
        RANK_OK(ctx, t->progress(&progressed));
      }
      double secs = secondsSince(t0);
      RANK_CHECK(ctx, r.complete && byte == 7, "not received");
      RANK_CHECK(ctx, secs < 0.6, "woken after ", secs, " s");
    } else {
      RANK_OK(ctx, ctx.barrier());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      uint8_t seven = 7;
      Request s = makeSend(&seven, 1);
      RANK_OK(ctx, t->post(1, &s));
      RANK_OK(ctx, drive(t.get(), {&s}, 20000));
    }
    RANK_OK(ctx, ctx.barrier());
    return "";
  });
  for (auto& o : out) EXPECT_EQ(o.exitCode, 0) << o.message;
}

}  // namespace
}  // namespace loom::test
