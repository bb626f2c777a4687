// Helpers shared by the builders: an empty schedule for this rank, a range of n elements cut into
// `parts` pieces whose sizes differ by at most one element, and a count cut into pipeline loops.
#pragma once

#include <algorithm>
#include <cstdint>

#include "sched/schedule.h"

namespace loom::algo {

// Resets *out to an empty schedule of group g's rank, built by `algo`.
inline void startSchedule(const sched::Group& g, const char* algo, sched::Schedule* out) {
  *out = sched::Schedule();
  out->rank = g.rank;
  out->nranks = g.nranks;
  out->algo = algo;
}

struct Range {
  uint64_t first = 0;  // element index
  uint64_t count = 0;  // elements
};

// Piece i of n elements cut into `parts` balanced pieces.
inline Range piece(uint64_t n, uint64_t parts, uint64_t i) {
  uint64_t base = n / parts, extra = n % parts;
  return {i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

// Number of pipeline loops so that one loop moves about `perLoopBytes` (at least 1 when n > 0).
inline uint64_t loopsFor(uint64_t n, uint64_t elemBytes, uint64_t perLoopBytes) {
  if (n == 0) return 0;
  uint64_t perLoopElems = std::max<uint64_t>(1, perLoopBytes / elemBytes);
  return (n + perLoopElems - 1) / perLoopElems;
}

inline int mod(int a, int p) { return ((a % p) + p) % p; }

}  // namespace loom::algo
