// Measurements (label perf): detection and shrink time after SIGKILL and SIGSTOP at 2-8 ranks
// (median of 5), and what heartbeats cost an 8-byte and a 64 MiB all-reduce (LOOM_HEARTBEAT_MS=0
// against the default, interleaved in one run). Prints markdown tables; LOOM_FAILURE_TABLE=path
// appends them to a file (scripts/failure-table.sh).
#include <gtest/gtest.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "coll/membership_util.h"
#include "harness/rank_harness.h"

namespace loom::testing {
namespace {

int64_t monoNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void emit(const std::string& text) {
  std::printf("%s", text.c_str());
  if (const char* path = std::getenv("LOOM_FAILURE_TABLE"))
    std::ofstream(path, std::ios::app) << text;
}

// One fault at p ranks: (detection s, shrink s), the slowest survivor of each; -1 on failure.
std::pair<double, double> measureOnce(Fault fault, int p, const std::string& transport) {
  SharedPage* page = SharedPage::make();
  const int victim = p - 1;
  RankOptions opt;
  opt.transport = transport;
  opt.killAfterMs = 60000;
  auto res = runRanks(
      p,
      [&](int rank, int n, loomComm_t comm) -> std::string {
        page->pid[rank] = getpid();
        std::vector<float> buf(1024, 1.0f);
        if (loomAllReduce(buf.data(), buf.data(), 1024, loomFloat32, loomSum, comm, nullptr))
          return "warm-up";
        if (rank == victim) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          page->value[63] = monoNs();
          raise(fault == Fault::kKill ? SIGKILL : SIGSTOP);
          return "";
        }
        loomResult_t r;
        do {
          r = loomAllReduce(buf.data(), buf.data(), 1024, loomFloat32, loomSum, comm, nullptr);
        } while (r == loomSuccess);
        page->value[rank] = monoNs() - page->value[63].load();
        const int64_t t0 = monoNs();
        loomComm_t small = nullptr;
        if (loomCommShrink(comm, nullptr, 0, &small) != loomSuccess) return "shrink";
        page->value[32 + rank] = monoNs() - t0;
        loomBarrier(small, nullptr);
        loomCommDestroy(small);
        if (fault == Fault::kStop && rank == 0) kill(page->pid[victim].load(), SIGKILL);
        return "";
      },
      opt);
  res[victim] = RankResult{0, 0, ""};
  double det = 0, shr = 0;
  for (int r = 0; r < victim; ++r) {
    det = std::max(det, page->value[r].load() / 1e9);
    shr = std::max(shr, page->value[32 + r].load() / 1e9);
  }
  munmap(page, sizeof(SharedPage));
  if (!failures(res).empty()) return {-1, -1};
  return {det, shr};
}

TEST(FailurePerf, DetectionAndShrinkTime) {
  std::ostringstream out;
  out << "\n| fault | transport | ranks | detection (s, median of 5) | shrink (ms, median of 5) |\n"
      << "|---|---|---|---|---|\n";
  for (Fault f : {Fault::kKill, Fault::kStop})
    for (const char* t : {"shm", "tcp"})
      for (int p : {2, 4, 6, 8}) {
        std::vector<double> det, shr;
        for (int i = 0; i < 5; ++i) {
          auto [d, s] = measureOnce(f, p, t);
          ASSERT_GE(d, 0) << faultName(f) << " " << t << " " << p;
          det.push_back(d);
          shr.push_back(s * 1e3);
        }
        char line[160];
        std::snprintf(line, sizeof(line), "| %s | %s | %d | %.2f | %.1f |\n", faultName(f), t, p,
                      median(det), median(shr));
        out << line;
      }
  emit(out.str());
}

// 8-byte all-reduce latency (us) at 4 ranks, and 64 MiB time (ms), with heartbeats off (0) and at
// the default, alternating 10 times each (each time a fresh set of ranks).
TEST(FailurePerf, HeartbeatCost) {
  std::ostringstream out;
  out << "\n| heartbeats | transport | 8 B all-reduce, us (median / min of 10 runs) | 64 MiB "
         "all-reduce, ms (median / min of 10 runs) |\n|---|---|---|---|\n";
  for (const char* t : {"shm", "tcp"}) {
    std::vector<double> lat[2], big[2];
    for (int round = 0; round < 20; ++round) {
      const int on = round % 2;
      SharedPage* page = SharedPage::make();
      RankOptions opt;
      opt.transport = t;
      opt.env = {{"LOOM_HEARTBEAT_MS", on ? "250" : "0"}};
      auto res = runRanks(
          4,
          [&](int rank, int p, loomComm_t comm) -> std::string {
            double x = 1;
            for (int i = 0; i < 200; ++i)
              loomAllReduce(&x, &x, 1, loomFloat64, loomSum, comm, nullptr);
            const int iters = 1500;
            int64_t t0 = monoNs();
            for (int i = 0; i < iters; ++i)
              if (loomAllReduce(&x, &x, 1, loomFloat64, loomSum, comm, nullptr)) return "8B";
            if (rank == 0) page->value[0] = (monoNs() - t0) / iters;
            std::vector<float> b((64u << 20) / 4, 1.0f);
            loomAllReduce(b.data(), b.data(), b.size(), loomFloat32, loomSum, comm, nullptr);
            t0 = monoNs();
            for (int i = 0; i < 2; ++i)
              if (loomAllReduce(b.data(), b.data(), b.size(), loomFloat32, loomSum, comm, nullptr))
                return "64M";
            if (rank == 0) page->value[1] = (monoNs() - t0) / 2;
            return "";
          },
          opt);
      ASSERT_EQ(failures(res), "");
      lat[on].push_back(page->value[0].load() / 1e3);
      big[on].push_back(page->value[1].load() / 1e6);
      munmap(page, sizeof(SharedPage));
    }
    for (int on : {0, 1}) {
      char line[160];
      std::snprintf(line, sizeof(line), "| %s | %s | %.1f / %.1f | %.1f / %.1f |\n",
                    on ? "250 ms" : "off", t, median(lat[on]),
                    *std::min_element(lat[on].begin(), lat[on].end()), median(big[on]),
                    *std::min_element(big[on].begin(), big[on].end()));
      out << line;
    }
  }
  emit(out.str());
}

}  // namespace
}  // namespace loom::testing
