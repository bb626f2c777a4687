// forced_vs_planned: the same all-reduce on two one-host communicators, F with LOOM_ALGO forcing
// an algorithm and P with nothing forced (the planner decides), through a given sequence of
// phases; per phase the time per call and the minor page faults per call (mean over ranks).
//
//   forced_vs_planned RANKS ALGO PHASE...      PHASE = SIZE:CALLS:F|P
//   forced_vs_planned 8 rabenseifner 64m:1:F 64m:1:P 32k:50:F 32k:50:P 128k:17:F 128k:17:P
//
// This is the sequence loom-plan --measure runs (a warm-up at the largest size, then every size
// on every communicator): with LOOM_PLAN_PARAMS set as in the validation, P takes the direct path
// at 32 KiB and the planner's choice at 128 KiB (Rabenseifner on 8 ranks), so P and F then run the
// same schedule and should take the same time. Ranks are forked processes over shm; every result
// is checked.
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/params.h"
#include "loom/loom.h"
#include "plan/overrides.h"

namespace {

struct Phase {
  uint64_t bytes = 0;
  int calls = 0;
  bool forced = false;
};

bool parsePhase(const std::string& s, Phase* out) {
  const size_t a = s.find(':'), b = s.rfind(':');
  if (a == std::string::npos || b == a) return false;
  if (!loom::plan::parseSize(s.substr(0, a), &out->bytes).ok() || out->bytes < 4) return false;
  out->calls = std::atoi(s.substr(a + 1, b - a - 1).c_str());
  const std::string who = s.substr(b + 1);
  out->forced = who == "F";
  return out->calls > 0 && (who == "F" || who == "P");
}

long minorFaults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// One rank: both communicators, then the phases; results[phase][rank] = {us, faults} per call.
int rankMain(int rank, int ranks, const std::string& algo, const std::vector<Phase>& phases,
             loomUniqueId* ids, volatile int* ready, double* results) {
  if (rank == 0) {
    if (loomGetUniqueId(&ids[0]) != loomSuccess || loomGetUniqueId(&ids[1]) != loomSuccess)
      return 2;
    __atomic_store_n(ready, 1, __ATOMIC_RELEASE);
  }
  while (!__atomic_load_n(ready, __ATOMIC_ACQUIRE)) usleep(1000);
  loomConfig_t cfg = LOOM_CONFIG_INITIALIZER;
  cfg.transport = "shm";
  loomComm_t comm[2];  // [0]: forced, [1]: planned
  for (int c = 0; c < 2; ++c) {
    if (c == 0)
      setenv("LOOM_ALGO", ("allreduce:" + algo).c_str(), 1);
    else
      unsetenv("LOOM_ALGO");
    loom::params::resetCacheForTesting();
    if (loomCommInitRankConfig(&comm[c], ranks, ids[c], rank, &cfg) != loomSuccess) return 2;
  }
  uint64_t most = 0;
  for (const Phase& p : phases) most = std::max(most, p.bytes);
  std::vector<float> in(most / 4, static_cast<float>(rank + 1)), out(most / 4);
  const float want = ranks * (ranks + 1) / 2.0f;
  for (size_t k = 0; k < phases.size(); ++k) {
    const Phase& p = phases[k];
    loomComm_t c = comm[p.forced ? 0 : 1];
    if (loomBarrier(c, nullptr) != loomSuccess) return 3;
    const long f0 = minorFaults();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < p.calls; ++i)
      if (loomAllReduce(in.data(), out.data(), p.bytes / 4, loomFloat32, loomSum, c, nullptr) !=
          loomSuccess)
        return 3;
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    results[(k * ranks + rank) * 2] = us / p.calls;
    results[(k * ranks + rank) * 2 + 1] = double(minorFaults() - f0) / p.calls;
    if (out[0] != want || out[p.bytes / 4 - 1] != want) return 4;
  }
  // A last barrier on both, so no rank leaves (and stops yielding the CPU) while others time.
  for (loomComm_t c : comm) loomBarrier(c, nullptr);
  for (loomComm_t c : comm) loomCommDestroy(c);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s RANKS ALGO SIZE:CALLS:F|P...\n", argv[0]);
    return 1;
  }
  const int ranks = std::atoi(argv[1]);
  const std::string algo = argv[2];
  std::vector<Phase> phases;
  for (int i = 3; i < argc; ++i) {
    Phase p;
    if (!parsePhase(argv[i], &p)) {
      std::fprintf(stderr, "bad phase '%s' (want SIZE:CALLS:F or SIZE:CALLS:P)\n", argv[i]);
      return 1;
    }
    phases.push_back(p);
  }
  if (ranks < 2) {
    std::fprintf(stderr, "RANKS must be 2 or more, not '%s'\n", argv[1]);
    return 1;
  }
  const size_t cells = phases.size() * ranks * 2;
  const size_t bytes = 4096 + cells * sizeof(double);
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return 1;
  auto* base = static_cast<char*>(mem);
  auto* ready = reinterpret_cast<volatile int*>(base);
  auto* ids = reinterpret_cast<loomUniqueId*>(base + 64);
  auto* results = reinterpret_cast<double*>(base + 4096);
  std::vector<pid_t> pids;
  for (int r = 0; r < ranks; ++r) {
    pid_t pid = fork();
    if (pid == 0) _exit(rankMain(r, ranks, algo, phases, ids, ready, results));
    pids.push_back(pid);
  }
  int bad = 0;
  for (pid_t pid : pids) {
    int st = 0;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) bad = 1;
  }
  if (bad) {
    std::fprintf(stderr, "a rank failed (init, call or wrong result)\n");
    return 1;
  }
  std::printf("# %d ranks over shm, F: LOOM_ALGO=allreduce:%s, P: nothing forced\n", ranks,
              algo.c_str());
  std::printf("%-10s %6s %4s %12s %18s\n", "bytes", "calls", "comm", "us/call",
              "minor faults/call");
  for (size_t k = 0; k < phases.size(); ++k) {
    double us = 0, faults = 0;
    for (int r = 0; r < ranks; ++r) {
      us += results[(k * ranks + r) * 2] / ranks;
      faults += results[(k * ranks + r) * 2 + 1] / ranks;
    }
    std::printf("%-10llu %6d %4s %12.1f %18.1f\n", static_cast<unsigned long long>(phases[k].bytes),
                phases[k].calls, phases[k].forced ? "F" : "P", us, faults);
  }
  return 0;
}
