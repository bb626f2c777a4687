// What call checking (LOOM_CHECK_CALLS) and checksums (LOOM_CHECKSUM) cost: the same all-reduce
// on communicators that differ only in those settings, timed in interleaved rounds in one run
// (median of the rounds' means), 8 bytes and 64 MiB, shm and tcp. Prints a table; label perf.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "api/comm.h"
#include "core/params.h"
#include "harness/rank_harness.h"

namespace loom::testing {
namespace {

using Clock = std::chrono::steady_clock;

struct Variant {
  const char* name;
  const char* checkCalls;
  const char* checksum;
};
const Variant kVariants[] = {{"checks off", "off", "0"},
                             {"checks on (default)", "on", "0"},
                             {"checks strict", "strict", "0"},
                             {"checks on + checksum", "on", "1"}};

// A communicator like `comm` made under the variant's settings.
loomComm_t variantComm(loomComm_t comm, int rank, const Variant& v, const std::string& transport) {
  setenv("LOOM_CHECK_CALLS", v.checkCalls, 1);
  setenv("LOOM_CHECKSUM", v.checksum, 1);
  params::resetCacheForTesting();
  loomConfig_t cfg = LOOM_CONFIG_INITIALIZER;
  if (!transport.empty()) cfg.transport = transport.c_str();
  loomComm_t out = nullptr;
  if (loomCommSplit(comm, 0, rank, &out, &cfg) != loomSuccess) return nullptr;
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void measure(const std::string& transport, int nranks, size_t bytes, int iters, int rounds) {
  RankOptions opt;
  opt.transport = transport;
  opt.killAfterMs = 600000;
  auto res = runRanks(
      nranks,
      [&](int rank, int, loomComm_t comm) -> std::string {
        std::vector<loomComm_t> comms;
        for (const Variant& v : kVariants) {
          loomComm_t c = variantComm(comm, rank, v, transport);
          if (c == nullptr) return std::string("split: ") + loomGetLastError(comm);
          comms.push_back(c);
        }
        std::vector<float> buf(std::max<size_t>(bytes / 4, 2), 1.0f);
        std::vector<std::vector<double>> us(comms.size());
        for (int r = 0; r < rounds + 1; ++r) {
          for (size_t j = 0; j < comms.size(); ++j) {
            const size_t k = (j + r) % comms.size();  // rotate the order from round to round
            if (loomBarrier(comms[k], nullptr) != loomSuccess) return "barrier failed";
            auto t0 = Clock::now();
            for (int i = 0; i < iters; ++i)
              if (loomAllReduce(buf.data(), buf.data(), buf.size(), loomFloat32, loomSum, comms[k],
                                nullptr) != loomSuccess)
                return std::string("allreduce: ") + loomGetLastError(comms[k]);
            double t = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / iters;
            if (r > 0) us[k].push_back(t);  // round 0 warms up
          }
        }
        // The per-call work checking adds, timed alone (wall time on a shared VM is too noisy to
        // resolve a few percent): numbering the call and beginCall (shm: the leftover check and
        // the published call) on the "on" communicator against the "off" one, which skips them.
        // Last, since it advances rank 0's call numbers alone; the others wait in a barrier on
        // the harness's communicator meanwhile.
        if (loomBarrier(comm, nullptr) != loomSuccess) return "barrier failed";
        if (rank == 0 && bytes == 8) {
          api::OpDesc op;
          op.count = 2;
          double ns[2];
          for (int k = 0; k < 2; ++k) {
            const auto t0 = Clock::now();
            constexpr int kN = 200000;
            for (int i = 0; i < kN; ++i) {
              const CallDesc d = api::nextCall(comms[k], op, true);
              if (!api::beginCall(comms[k], d).ok()) return "beginCall failed";
            }
            ns[k] = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / kN;
          }
          std::fprintf(stderr,
                       "| %s | %d | per call: number + beginCall: off %.1f ns, on %.1f ns |\n",
                       transport.c_str(), nranks, ns[0], ns[1]);
        }
        if (loomBarrier(comm, nullptr) != loomSuccess) return "barrier failed";
        if (rank == 0) {
          const double base = median(us[0]);
          for (size_t k = 0; k < comms.size(); ++k) {
            const double m = median(us[k]);
            std::fprintf(stderr, "| %s | %d | %zu B | %s | %.2f us | %+.1f%% |\n",
                         transport.c_str(), nranks, bytes, kVariants[k].name, m,
                         100.0 * (m / base - 1));
          }
        }
        for (loomComm_t c : comms) loomCommDestroy(c);
        return "";
      },
      opt);
  EXPECT_EQ(failures(res), "");
}

TEST(WireChecksPerf, SmallAndLargeAllReduce) {
  std::fprintf(stderr, "| transport | ranks | size | variant | median per call | vs off |\n");
  measure("shm", 2, 8, 100, 201);
  measure("shm", 4, 8, 50, 201);
  measure("tcp", 2, 8, 50, 201);
  measure("shm", 2, 64 << 20, 2, 7);
  measure("tcp", 2, 64 << 20, 2, 7);
}

}  // namespace
}  // namespace loom::testing
