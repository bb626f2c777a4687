// Every ISA this CPU supports, every dtype x op, many lengths, unaligned pointers and aliasing:
// the dispatched kernels must equal the scalar oracle bit for bit (any NaN matches any NaN).
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernel_test_util.h"

namespace loom::kernels::testing {
namespace {

const size_t kLengths[] = {0,  1,  2,  3,  7,   15,  16,  17,   31,  32,
                           33, 63, 64, 65, 127, 128, 129, 1000, 4099};
// Byte offsets of the three buffers from a 64-byte boundary: aligned, off by one element,
// and off by an odd number of bytes (legal for a user's byte buffer).
const size_t kOffsets[] = {0, 1, 3};

enum class Alias { kNone, kDstIsA, kDstIsB, kAll };
const char* aliasName(Alias a) {
  switch (a) {
    case Alias::kNone:
      return "out-of-place";
    case Alias::kDstIsA:
      return "dst==a";
    case Alias::kDstIsB:
      return "dst==b";
    default:
      return "dst==a==b";
  }
}

struct Buffers {
  std::vector<uint8_t> a, b, dst, want;
};

class ReduceSweep : public IsaTest {
 protected:
  // Runs one case; returns false (after reporting) on the first mismatch.
  bool runCase(DataType dt, RedOp op, size_t n, size_t offsetElems, size_t offsetBytes,
               Alias alias) {
    size_t es = dtypeSize(dt);
    size_t shift = offsetElems * es + offsetBytes;
    size_t bytes = n * es;
    // 64-byte aligned storage, then shifted.
    std::vector<uint64_t> sa(bytes / 8 + 16), sb(bytes / 8 + 16), sd(bytes / 8 + 16);
    uint8_t* a = reinterpret_cast<uint8_t*>(sa.data()) + shift;
    uint8_t* b = reinterpret_cast<uint8_t*>(sb.data()) + shift;
    uint8_t* d = reinterpret_cast<uint8_t*>(sd.data()) + shift;
    fillRandom(dt, a, n, rng_);
    fillRandom(dt, b, n, rng_);
    if (alias == Alias::kAll) std::memcpy(b, a, bytes);
    std::vector<uint8_t> want(bytes + 1);
    reduceScalar(want.data(), a, b, n, dt, op);
    // Guard bytes after the end must not be written.
    uint8_t* end = (alias == Alias::kDstIsB ? b : alias == Alias::kNone ? d : a) + bytes;
    std::memset(end, 0xa5, 8);
    switch (alias) {
      case Alias::kNone:
        reduce(d, a, b, n, dt, op);
        break;
      case Alias::kDstIsA:
        reduceInto(a, b, n, dt, op);
        d = a;
        break;
      case Alias::kDstIsB:
        reduce(b, a, b, n, dt, op);
        d = b;
        break;
      case Alias::kAll:
        reduce(a, a, a, n, dt, op);
        d = a;
        break;
    }
    std::string what = std::string(isaName(GetParam())) + " " + dtypeName(dt) + " " + opName(op) +
                       " n=" + std::to_string(n) + " shift=" + std::to_string(shift) + " " +
                       aliasName(alias);
    size_t bad = firstMismatch(dt, d, want.data(), n);
    LOOM_EXPECT_SAME_ELEMENTS(dt, d, want.data(), n, what);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(end[i], 0xa5) << what << ": wrote past the end";
    return bad == n && !HasFailure();
  }
  std::mt19937_64 rng_{12345};
};

TEST_P(ReduceSweep, MatchesScalarOracleForEveryDtypeOpLengthAndAlignment) {
  for (DataType dt : allDtypes()) {
    for (RedOp op : kernelOps()) {
      for (size_t n : kLengths) {
        for (size_t off : kOffsets) {
          size_t elems = off == 3 ? 0 : off;
          size_t bytes = off == 3 ? 3 : 0;
          if (!runCase(dt, op, n, elems, bytes, Alias::kNone)) return;
        }
      }
    }
  }
}

TEST_P(ReduceSweep, AliasedDestinationMatchesOutOfPlace) {
  for (DataType dt : allDtypes()) {
    for (RedOp op : kernelOps()) {
      for (size_t n : {size_t{1}, size_t{17}, size_t{129}, size_t{4099}}) {
        for (Alias alias : {Alias::kDstIsA, Alias::kDstIsB, Alias::kAll}) {
          if (!runCase(dt, op, n, 1, 0, alias)) return;
        }
      }
    }
  }
}

TEST_P(ReduceSweep, AvgIsSumThenDivideForEveryDtype) {
  for (DataType dt : allDtypes()) {
    for (size_t n : {size_t{1}, size_t{15}, size_t{1000}, size_t{4099}}) {
      size_t bytes = n * dtypeSize(dt);
      std::vector<uint8_t> a(bytes), b(bytes), want(bytes), got(bytes);
      fillRandom(dt, a.data(), n, rng_);
      fillRandom(dt, b.data(), n, rng_);
      reduceScalar(want.data(), a.data(), b.data(), n, dt, RedOp::kSum);
      divideScalar(want.data(), n, dt, 3);
      // kAvg passed to reduce() is its sum step.
      reduce(got.data(), a.data(), b.data(), n, dt, RedOp::kAvg);
      divideInPlace(got.data(), n, dt, 3);
      LOOM_EXPECT_SAME_ELEMENTS(dt, got.data(), want.data(), n,
                                std::string(dtypeName(dt)) + " n=" + std::to_string(n));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, ReduceSweep, ::testing::ValuesIn(supportedIsas()), isaParamName);

}  // namespace
}  // namespace loom::kernels::testing
