// Helpers for the failure and membership tests: a page of memory shared by all forked ranks (pids,
// flags), faults injected with real signals, and a sweep of every collective with exact results.
#pragma once

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "coll/coll_checks.h"
#include "loom/loom.h"

namespace loom::testing {

// Made before fork (MAP_SHARED | MAP_ANONYMOUS), so every rank and the test see the same page.
struct SharedPage {
  std::atomic<int> pid[64];
  std::atomic<int> flag[64];
  std::atomic<int64_t> value[64];
  static SharedPage* make() {
    void* p = mmap(nullptr, sizeof(SharedPage), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED) return nullptr;
    return new (p) SharedPage();
  }
};

enum class Fault { kKill, kStop };
inline const char* faultName(Fault f) { return f == Fault::kKill ? "SIGKILL" : "SIGSTOP"; }

// From a thread of the faulty rank, after delayMs: SIGKILL or SIGSTOP the whole process.
inline void injectLater(Fault f, int delayMs) {
  std::thread([f, delayMs] {
    std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
    raise(f == Fault::kKill ? SIGKILL : SIGSTOP);
  }).detach();
}

inline double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Every collective with exact results, at a size on the small (direct / latency) path and one on
// the large (pipelined) path. "" or the first failure.
std::string everyCollective(loomComm_t comm, int rank, int p);

// Repeats all-reduces of `floats` elements until one fails (or `maxIters` pass); returns its code,
// and the seconds from `t0` to the failure in *seconds.
loomResult_t allReduceUntilError(loomComm_t comm, size_t floats, int maxIters,
                                 std::chrono::steady_clock::time_point t0, double* seconds);

// Names of loom's segments in /dev/shm now, and those that appeared since `before` and stayed
// (other tests' segments vanish within milliseconds: loom unlinks them once mapped).
std::set<std::string> loomShmSegments();
std::string leftoverSegments(const std::set<std::string>& before);

// "" when `comm`'s failed ranks (loomCommGetFailedRanks) are exactly `want`.
std::string failedRanksAre(loomComm_t comm, const std::vector<int>& want, bool agree);

}  // namespace loom::testing
