// The scalar oracle itself, checked against references written independently here: plain C++
// arithmetic for integers and float32/float64, GCC's _Float16 for float16, and an exact
// nearest-candidate rounding for bfloat16.
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

// Round to the nearer of the two bfloat16 neighbours of |f| (ties to the even one), using exact
// double arithmetic; the neighbour above the largest finite value stands for Inf (= 2^128).
uint16_t refFloatToBf16(float f) {
  if (std::isnan(f)) return 0x7fc0;
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  uint16_t lo = static_cast<uint16_t>((u & 0x7fffffff) >> 16);
  if ((u & 0xffff) == 0) return static_cast<uint16_t>(sign | lo);
  uint16_t hi = static_cast<uint16_t>(lo + 1);
  double x = std::fabs(static_cast<double>(f));
  double vlo = refBf16ToFloat(lo);
  double vhi = hi == 0x7f80 ? std::ldexp(1.0, 128) : static_cast<double>(refBf16ToFloat(hi));
  double dlo = x - vlo, dhi = vhi - x;
  uint16_t pick = dlo < dhi ? lo : dhi < dlo ? hi : ((lo & 1) ? hi : lo);
  return static_cast<uint16_t>(sign | pick);
}

uint16_t refFloatToHalf(float f) {
  _Float16 h = static_cast<_Float16>(f);
  uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}
float refHalfToFloat(uint16_t u) {
  _Float16 h;
  std::memcpy(&h, &u, 2);
  return static_cast<float>(h);
}

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
  for (int i = 0; i < 2000000; ++i) {
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

}  // namespace
}  // namespace loom::kernels::testing
