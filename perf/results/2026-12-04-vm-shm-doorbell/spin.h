// Spinning waiters that notice when they share their core.
#pragma once

#include <sched.h>

#include <chrono>

namespace loom {

// Yields the CPU and says whether another thread ran on this core meanwhile: a yield with no one
// else runnable here returns in about a microsecond; one that took longer gave the core away.
// A waiter that shares its core should stop spinning and sleep: two spinners that yield to each
// other on one core stay there (the scheduler keeps a task that ran recently where it is, and
// each yield hands the core to the other), while the other core idles. A sleeper is woken onto
// an idle core.
inline bool yieldSharesCore() {
  constexpr auto kShared = std::chrono::microseconds(5);
  const auto t0 = std::chrono::steady_clock::now();
  sched_yield();
  return std::chrono::steady_clock::now() - t0 >= kShared;
}

}  // namespace loom
