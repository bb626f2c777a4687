// Performance of the one-host direct path (label perf: it compares CPU times, so a loaded machine
// can fail it; run with `ctest -L perf`).
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <new>
#include <string>

#include "harness/rank_harness.h"

namespace loom::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::string check(loomResult_t r, loomComm_t comm, const char* what) {
  return r == loomSuccess ? "" : std::string(what) + ": " + loomGetLastError(comm);
}

// With the other cores busy, both ranks end up on one core: a rank that waits must hand the core
// to its peer at once, not spin for microseconds while the peer cannot run. Both ranks are pinned
// to one CPU after the communicator exists (so it believes it has a core per rank), and the CPU
// time this thread spends per 1-element direct all-reduce is measured. Spinning through the
// pure-spin window (4 us) while the peer waits for the core costs at least 2 us a call (every
// other call, per rank); the back-off in ShmDirect::waitAll avoids it. The limit is relative to a
// baseline measured in the same run, in batches interleaved with loom's: the bare handover, the
// two processes on that CPU passing a turn through shared memory with sched_yield. A fixed 2 us
// limit failed on a slower 2-vCPU VM (2026-12-02) where nothing spun. Measured there: with the
// back-off loom's call 2.1-2.9 us against a handover of 2.9-3.9 us; with the back-off disabled
// 4.3-4.9 us against 2.9-3.9 us (0.8-1.4 us above it). The limit: the handover + 0.5 us.
TEST(ShmDirect, RanksSharingOneCoreHandItOverWithoutSpinning) {
  RankOptions opt;
  opt.env = {{"LOOM_ALGO", "allreduce:direct"}};
  // The handover baseline's turn word, in a page both forked ranks inherit.
  void* mem = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  auto* turn = new (mem) std::atomic<uint32_t>(0);
  auto res = runRanks(
      2,
      [turn](int rank, int, loomComm_t comm) -> std::string {
        cpu_set_t all, one;
        if (sched_getaffinity(0, sizeof all, &all) != 0) return "sched_getaffinity failed";
        int cpu = 0;
        while (!CPU_ISSET(cpu, &all)) ++cpu;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0) return "sched_setaffinity failed";
        auto cpuUs = [] {
          timespec ts;
          clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
          return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
        };
        uint32_t passes = 0;
        // One handover: wait for our turn (yielding), pass it on. false after 10 s (peer gone).
        auto handover = [&] {
          const uint32_t want = 2 * passes++ + static_cast<uint32_t>(rank);
          const auto deadline = Clock::now() + std::chrono::seconds(10);
          while (turn->load(std::memory_order_acquire) != want) {
            if (Clock::now() > deadline) return false;
            sched_yield();
          }
          turn->store(want + 1, std::memory_order_release);
          return true;
        };
        float x = 1;
        std::string e;
        for (int i = 0; i < 200 && e.empty(); ++i)  // warm-up
          e = check(loomAllReduce(&x, &x, 1, loomFloat32, loomSum, comm, nullptr), comm, "warm");
        // The least CPU time per call over batches of 100 calls (the same number on both ranks):
        // a batch that another process on this CPU interrupted costs more, a rank that spins
        // while its peer waits for the core costs it in every batch (2.6-3.2 us before the
        // back-off; 0.9 us with it, 1.0-1.5 us with a busy process pinned to the same CPU).
        const double marginUs = 0.5;  // over the bare handover (see above)
        const int batches = 20, calls = 100;
        double best = 1e9, bestHandover = 1e9;
        for (int b = 0; b < batches && e.empty(); ++b) {
          double t0 = cpuUs();
          for (int i = 0; i < calls && e.empty(); ++i)
            e = check(loomAllReduce(&x, &x, 1, loomFloat32, loomSum, comm, nullptr), comm, "call");
          best = std::min(best, (cpuUs() - t0) / calls);
          t0 = cpuUs();
          for (int i = 0; i < calls && e.empty(); ++i)
            if (!handover()) e = "handover baseline: the peer stopped passing the turn";
          bestHandover = std::min(bestHandover, (cpuUs() - t0) / calls);
        }
        sched_setaffinity(0, sizeof all, &all);
        if (!e.empty()) return e;
        return best < bestHandover + marginUs
                   ? ""
                   : "CPU time per call " + std::to_string(best) + " us, the bare handover " +
                         std::to_string(bestHandover) + " us";
      },
      opt);
  munmap(mem, 4096);
  EXPECT_EQ(failures(res), "");
}

}  // namespace
}  // namespace loom::testing
