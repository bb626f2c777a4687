// The scalar oracle itself, checked against references written independently here: plain C++
// arithmetic for integers and float32/float64; float16/bfloat16 decoded from their definitions
// and rounded by an exact nearest-candidate search (and, where the compiler has _Float16, also
// checked against the compiler's own conversions).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "kernels/kernel_test_util.h"

namespace loom::kernels::testing {
namespace {

template <typename T>
T refOp(RedOp op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    switch (op) {
      case RedOp::kSum:
        return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
      case RedOp::kProd:
        return static_cast<T>(static_cast<U>(static_cast<uint64_t>(static_cast<U>(a)) *
                                             static_cast<uint64_t>(static_cast<U>(b))));
      case RedOp::kMax:
        return a > b ? a : b;
      default:
        return a < b ? a : b;
    }
  } else {
    switch (op) {
      case RedOp::kSum:
        return a + b;
      case RedOp::kProd:
        return a * b;
      default:
        if (std::isnan(a)) return a;
        if (std::isnan(b)) return b;
        if (op == RedOp::kMax) return a > b ? a : b;
        return a < b ? a : b;
    }
  }
}

float refBf16ToFloat(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// binary16 from its definition: (-1)^s * 2^(e-15) * 1.m, or 2^-14 * 0.m when e == 0.
float refHalfToFloat(uint16_t h) {
  int e = (h >> 10) & 31;
  int m = h & 1023;
  double mag = e == 31  ? (m != 0 ? std::numeric_limits<double>::quiet_NaN()
                                  : std::numeric_limits<double>::infinity())
               : e == 0 ? std::ldexp(m, -24)
                        : std::ldexp(1024 + m, e - 25);
  return static_cast<float>((h & 0x8000) != 0 ? -mag : mag);
}

// Rounds f to a 16-bit format whose positive codes 0..infCode increase with their value: finds by
// binary search the largest code not above |f|, then picks the nearer neighbour (ties to the even
// code), all in exact double arithmetic. overflowValue stands for the code infCode when rounding
// (the value one unit above the largest finite number: 2^16 for float16, 2^128 for bfloat16).
template <class Decode>
uint16_t refRound(float f, Decode decode, uint16_t infCode, double overflowValue) {
  if (std::isnan(f)) return static_cast<uint16_t>(infCode | 1u);  // some NaN
  uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  double x = std::fabs(static_cast<double>(f));
  auto value = [&](uint32_t c) {
    return c >= infCode ? overflowValue : static_cast<double>(decode(static_cast<uint16_t>(c)));
  };
  if (x >= overflowValue) return static_cast<uint16_t>(sign | infCode);
  uint32_t lo = 0, hi = infCode - 1u;
  while (lo < hi) {
    uint32_t mid = (lo + hi + 1) / 2;
    if (value(mid) <= x) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  double dlo = x - value(lo), dhi = value(lo + 1) - x;
  uint32_t pick = dlo < dhi ? lo : dhi < dlo ? lo + 1 : ((lo & 1) != 0 ? lo + 1 : lo);
  return static_cast<uint16_t>(sign | pick);
}

uint16_t refFloatToBf16(float f) {
  return refRound(f, refBf16ToFloat, 0x7f80, std::ldexp(1.0, 128));
}
uint16_t refFloatToHalf(float f) { return refRound(f, refHalfToFloat, 0x7c00, 65536.0); }

template <typename T>
void checkPlain(DataType dt, std::mt19937_64& rng) {
  const size_t n = 20000;
  std::vector<T> a(n), b(n), got(n), want(n);
  fillRandom(dt, a.data(), n, rng);
  fillRandom(dt, b.data(), n, rng);
  for (RedOp op : kernelOps()) {
    for (size_t i = 0; i < n; ++i) want[i] = refOp<T>(op, a[i], b[i]);
    reduceScalar(got.data(), a.data(), b.data(), n, dt, op);
    LOOM_EXPECT_SAME_ELEMENTS(dt, got.data(), want.data(), n,
                              std::string(dtypeName(dt)) + " " + opName(op));
  }
}

TEST(KernelReference, ScalarOracleMatchesPlainArithmetic) {
  std::mt19937_64 rng(7);
  checkPlain<int8_t>(DataType::kInt8, rng);
  checkPlain<uint8_t>(DataType::kUint8, rng);
  checkPlain<int32_t>(DataType::kInt32, rng);
  checkPlain<uint32_t>(DataType::kUint32, rng);
  checkPlain<int64_t>(DataType::kInt64, rng);
  checkPlain<uint64_t>(DataType::kUint64, rng);
  checkPlain<float>(DataType::kFloat32, rng);
  checkPlain<double>(DataType::kFloat64, rng);
}

// Every float16 value against every other one (a permutation), for every op.
TEST(KernelReference, ScalarHalfAndBf16MatchIndependentRounding) {
  const size_t n = 65536;
  std::vector<uint16_t> a(n), b(n), got(n), want(n);
  std::mt19937_64 rng(11);
  for (size_t i = 0; i < n; ++i) a[i] = b[i] = static_cast<uint16_t>(i);
  std::shuffle(b.begin(), b.end(), rng);
  for (RedOp op : kernelOps()) {
    for (size_t i = 0; i < n; ++i) {
      want[i] = refFloatToHalf(refOp<float>(op, refHalfToFloat(a[i]), refHalfToFloat(b[i])));
    }
    reduceScalar(got.data(), a.data(), b.data(), n, DataType::kFloat16, op);
    LOOM_EXPECT_SAME_ELEMENTS(DataType::kFloat16, got.data(), want.data(), n,
                              std::string("float16 ") + opName(op));
    for (size_t i = 0; i < n; ++i) {
      want[i] = refFloatToBf16(refOp<float>(op, refBf16ToFloat(a[i]), refBf16ToFloat(b[i])));
    }
    reduceScalar(got.data(), a.data(), b.data(), n, DataType::kBfloat16, op);
    LOOM_EXPECT_SAME_ELEMENTS(DataType::kBfloat16, got.data(), want.data(), n,
                              std::string("bfloat16 ") + opName(op));
  }
}

TEST(KernelReference, HalfToFloatIsExactForEveryValue) {
  for (uint32_t h = 0; h < 65536; ++h) {
    float got = halfToFloat(static_cast<uint16_t>(h));
    float want = refHalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << h;
      // payload kept, made quiet (as F16C): 0x7c01 -> 0x7fc02000
      uint32_t bits;
      std::memcpy(&bits, &got, 4);
      EXPECT_EQ(bits, ((h & 0x8000u) << 16) | 0x7fc00000u | ((h & 0x3ffu) << 13)) << std::hex << h;
    } else {
      ASSERT_EQ(std::memcmp(&got, &want, 4), 0) << std::hex << h;
    }
    EXPECT_EQ(floatToHalf(got), std::isnan(want) ? (h | 0x200u) : h) << std::hex << h;
    float bf = bf16ToFloat(static_cast<uint16_t>(h));
    EXPECT_EQ(floatToBf16(bf), std::isnan(bf) ? (h | 0x40u) : h) << std::hex << h;
  }
}

// float -> half and float -> bfloat16 over a wide sample of float bit patterns, concentrated near
// the rounding boundaries (low mantissa bits 0x0fff/0x1000/0x1001 for half, 0x7fff/0x8000/0x8001
// for bf16) and across the subnormal and overflow ranges.
TEST(KernelReference, FloatToHalfAndBf16RoundToNearestEven) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 600000; ++i) {
    uint32_t u = static_cast<uint32_t>(rng());
    switch (i % 4) {
      case 1:
        u = (u & ~0x1fffu) | (0x0fffu + (i / 4) % 3);
        break;
      case 2:
        u = (u & ~0xffffu) | (0x7fffu + (i / 4) % 3);
        break;
      case 3:
        u = (u & 0x80ffffffu) | ((0x30u + (i / 4) % 0x20u) << 24);
        break;  // 2^-31..2^32
      default:
        break;
    }
    float f;
    std::memcpy(&f, &u, 4);
    uint16_t h = floatToHalf(f);
    if (std::isnan(f)) {
      EXPECT_EQ(h, ((u >> 16) & 0x8000u) | 0x7e00u | ((u >> 13) & 0x3ffu)) << std::hex << u;
      EXPECT_EQ(floatToBf16(f), (u >> 16) | 0x40u) << std::hex << u;
      continue;
    }
    ASSERT_EQ(h, refFloatToHalf(f)) << std::hex << u;
    ASSERT_EQ(floatToBf16(f), refFloatToBf16(f)) << std::hex << u;
  }
}

#if defined(__FLT16_MANT_DIG__)
TEST(KernelReference, HalfConversionsMatchCompilerFloat16) {
  for (uint32_t h = 0; h < 65536; ++h) {
    _Float16 x;
    uint16_t u = static_cast<uint16_t>(h);
    std::memcpy(&x, &u, 2);
    float want = static_cast<float>(x);
    float got = halfToFloat(u);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << h;
    } else {
      EXPECT_EQ(std::memcmp(&got, &want, 4), 0) << std::hex << h;
    }
  }
  std::mt19937_64 rng(17);
  for (int i = 0; i < 1000000; ++i) {
    uint32_t bits = static_cast<uint32_t>(rng());
    if (i % 2) bits = (bits & 0x80ffffffu) | ((0x30u + i % 0x20u) << 24);
    float f;
    std::memcpy(&f, &bits, 4);
    if (std::isnan(f)) continue;
    _Float16 x = static_cast<_Float16>(f);
    uint16_t want;
    std::memcpy(&want, &x, 2);
    ASSERT_EQ(floatToHalf(f), want) << std::hex << bits;
  }
}
#endif

}  // namespace
}  // namespace loom::kernels::testing
