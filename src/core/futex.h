// futex(2) on a 32-bit word that may live in shared memory (FUTEX_WAIT/WAKE without the private
// flag, so waiters and wakers can be different processes).
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <ctime>

namespace loom {

// Sleeps while *word == expected, at most timeoutUs. Returns 0 when woken, else the errno
// (EAGAIN: the value had already changed; ETIMEDOUT; EINTR).
inline int futexWait(std::atomic<uint32_t>* word, uint32_t expected, int64_t timeoutUs) {
  timespec ts{static_cast<time_t>(timeoutUs / 1000000),
              static_cast<long>(timeoutUs % 1000000) * 1000};
  long rc =
      syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
  return rc == 0 ? 0 : errno;
}

// Wakes every waiter.
inline void futexWake(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace loom
