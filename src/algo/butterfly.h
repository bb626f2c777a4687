// Shared pieces of the butterfly algorithms (recursive doubling, recursive halving, Rabenseifner):
// folding a non-power-of-two p onto p' = 2^floor(lg p) "virtual" ranks, and the window of blocks a
// virtual rank holds after each halving step.
//
// Fold: with r = p - p', among ranks 0 .. 2r-1 every even rank x is an "extra": it hands its data
// to x + 1 before the butterfly and gets the result back after it. Odd x < 2r is virtual rank x/2;
// x >= 2r is virtual rank x - r. Virtual rank v therefore stands for the real ranks
// [firstReal(v), firstReal(v + 1)): one rank, or two (the extra and its partner) when v < r.
#pragma once

#include <cstdint>
#include <vector>

#include "algo/partition.h"

namespace loom::algo {

struct Fold {
  int p = 1;      // real ranks
  int pow2 = 1;   // virtual ranks, largest power of two <= p
  int extra = 0;  // p - pow2

  explicit Fold(int nranks) : p(nranks) {
    while (pow2 * 2 <= p) pow2 *= 2;
    extra = p - pow2;
  }
  bool isExtra(int x) const { return x < 2 * extra && x % 2 == 0; }
  // Virtual rank of real rank x, -1 for an extra.
  int vrank(int x) const {
    if (x < 2 * extra) return x % 2 ? x / 2 : -1;
    return x - extra;
  }
  int real(int v) const { return v < extra ? 2 * v + 1 : v + extra; }
  // First real rank a virtual rank stands for (v may be pow2: returns p).
  int firstReal(int v) const { return v < extra ? 2 * v : v + extra; }
};

// Window [lo, hi) of virtual blocks.
struct Window {
  int lo = 0, hi = 0;
};

// Halving order: masks applied one after the other. `farFirst` gives pow2/2, ..., 1 (block v ends
// at virtual rank v), otherwise 1, 2, ..., pow2/2 (block bitreverse(v) ends at v; the big early
// steps then stay between neighbours).
inline std::vector<int> halvingMasks(int pow2, bool farFirst) {
  std::vector<int> m;
  for (int k = 1; k < pow2; k *= 2) m.push_back(k);
  if (farFirst) return std::vector<int>(m.rbegin(), m.rend());
  return m;
}

// Per halving step of virtual rank v: the window it keeps and the window it gives to v ^ mask.
struct HalvingStep {
  int mask = 0;
  Window keep, give;
};
inline std::vector<HalvingStep> halvingSteps(int v, int pow2, bool farFirst) {
  std::vector<HalvingStep> out;
  Window w{0, pow2};
  for (int m : halvingMasks(pow2, farFirst)) {
    int mid = (w.lo + w.hi) / 2;
    Window lower{w.lo, mid}, upper{mid, w.hi};
    bool low = (v & m) == 0;
    out.push_back({m, low ? lower : upper, low ? upper : lower});
    w = out.back().keep;
  }
  return out;
}

// Elements of the blocks in window w when `count` elements are cut into `parts` balanced blocks.
inline Range windowRange(uint64_t count, int parts, Window w) {
  uint64_t first = piece(count, parts, w.lo).first;
  uint64_t end = w.hi >= parts ? count : piece(count, parts, w.hi).first;
  return {first, end - first};
}

}  // namespace loom::algo
