// Documented semantics, checked on every ISA with inputs long enough to go through the vector
// loops and the scalar tails: NaN/Inf/signed zero in max/min/sum/prod, float16/bfloat16 rounding,
// integer wrap-around, avg's truncating division, and the LOOM_KERNEL_ISA parameter.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/kernel_test_util.h"

namespace loom::kernels::testing {
namespace {

// Repeats the cases until there are at least 300 elements, so every position modulo the vector
// width (and the unrolled loop) sees every case.
template <typename T>
std::vector<T> tile(std::vector<T> v) {
  size_t base = v.size();
  for (size_t i = 0; v.size() < 300 || v.size() % base != 0; ++i) v.push_back(v[i % base]);
  return v;
}

template <typename T>
void expectReduce(DataType dt, RedOp op, const std::vector<T>& a0, const std::vector<T>& b0,
                  const std::vector<T>& want0, const char* what) {
  std::vector<T> a = tile(a0), b = tile(b0), want = tile(want0), got(a.size());
  reduce(got.data(), a.data(), b.data(), a.size(), dt, op);
  LOOM_EXPECT_SAME_ELEMENTS(
      dt, got.data(), want.data(), a.size(),
      std::string(isaName()) + " " + dtypeName(dt) + " " + opName(op) + " " + what);
}

using Semantics = IsaTest;
constexpr float kNanF = std::numeric_limits<float>::quiet_NaN();
constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr double kNanD = std::numeric_limits<double>::quiet_NaN();
constexpr double kInfD = std::numeric_limits<double>::infinity();

TEST_P(Semantics, MaxMinPropagateNaNAndReturnBForEqualInputs) {
  std::vector<float> a = {kNanF, 1.f, kNanF, -kInfF, 0.f, -0.f, 2.f, kInfF};
  std::vector<float> b = {1.f, kNanF, kNanF, kNanF, -0.f, 0.f, 2.f, 3.f};
  expectReduce(DataType::kFloat32, RedOp::kMax, a, b,
               {kNanF, kNanF, kNanF, kNanF, -0.f, 0.f, 2.f, kInfF}, "NaN");
  expectReduce(DataType::kFloat32, RedOp::kMin, a, b,
               {kNanF, kNanF, kNanF, kNanF, -0.f, 0.f, 2.f, 3.f}, "NaN");
  std::vector<double> ad = {kNanD, 1.0, -kInfD, 0.0, -0.0};
  std::vector<double> bd = {1.0, kNanD, -1.0, -0.0, 0.0};
  expectReduce(DataType::kFloat64, RedOp::kMax, ad, bd, {kNanD, kNanD, -1.0, -0.0, 0.0}, "NaN");
  expectReduce(DataType::kFloat64, RedOp::kMin, ad, bd, {kNanD, kNanD, -kInfD, -0.0, 0.0}, "NaN");
  // float16: NaN 0x7e00, 1.0 0x3c00, -Inf 0xfc00, +0 0x0000, -0 0x8000, 2.0 0x4000
  std::vector<uint16_t> ah = {0x7e00, 0x3c00, 0xfc00, 0x0000, 0x8000};
  std::vector<uint16_t> bh = {0x3c00, 0x7e00, 0x4000, 0x8000, 0x0000};
  expectReduce(DataType::kFloat16, RedOp::kMax, ah, bh, {0x7e00, 0x7e00, 0x4000, 0x8000, 0x0000},
               "NaN");
  expectReduce(DataType::kFloat16, RedOp::kMin, ah, bh, {0x7e00, 0x7e00, 0xfc00, 0x8000, 0x0000},
               "NaN");
  // bfloat16: NaN 0x7fc0, 1.0 0x3f80, -Inf 0xff80, 2.0 0x4000
  std::vector<uint16_t> ab = {0x7fc0, 0x3f80, 0xff80, 0x0000};
  std::vector<uint16_t> bb = {0x3f80, 0x7fc0, 0x4000, 0x8000};
  expectReduce(DataType::kBfloat16, RedOp::kMax, ab, bb, {0x7fc0, 0x7fc0, 0x4000, 0x8000}, "NaN");
  expectReduce(DataType::kBfloat16, RedOp::kMin, ab, bb, {0x7fc0, 0x7fc0, 0xff80, 0x8000}, "NaN");
}

TEST_P(Semantics, SumAndProdFollowIeeeForInfAndNaN) {
  std::vector<float> a = {kInfF, kInfF, kNanF, 1.f, 0.f, 3e38f, -0.f};
  std::vector<float> b = {-kInfF, 1.f, 1.f, kNanF, kInfF, 3e38f, -0.f};
  expectReduce(DataType::kFloat32, RedOp::kSum, a, b,
               {kNanF, kInfF, kNanF, kNanF, kInfF, kInfF, -0.f}, "Inf/NaN");
  expectReduce(DataType::kFloat32, RedOp::kProd, a, b,
               {-kInfF, kInfF, kNanF, kNanF, kNanF, kInfF, 0.f}, "Inf/NaN");
  // float16 overflow: 60000 + 60000 -> Inf; 65504 + 1 -> 65504; 65504 + 16 = 65520 is halfway
  // to 65536 and ties to even, which is Inf; 65504 + 8 -> 65504.
  std::vector<uint16_t> ah = {0x7b53, 0x7bff, 0x7c00, 0x7c00, 0x7bff, 0x7bff};
  std::vector<uint16_t> bh = {0x7b53, 0x3c00, 0xfc00, 0x3c00, 0x4c00, 0x4800};
  expectReduce(DataType::kFloat16, RedOp::kSum, ah, bh,
               {0x7c00, 0x7bff, 0x7e00, 0x7c00, 0x7c00, 0x7bff}, "overflow");
  expectReduce(DataType::kFloat16, RedOp::kProd, ah, bh,
               {0x7c00, 0x7bff, 0xfc00, 0x7c00, 0x7c00, 0x7c00}, "overflow");
}

TEST_P(Semantics, HalfAndBf16RoundToNearestEven) {
  // float16: 1 + 2^-11 is halfway between 1 and 1+2^-10: ties to even (1.0 = 0x3c00);
  // (1+2^-10) + 2^-11 ties up to 1+2^-9 (0x3c02); 1 + 3*2^-12 rounds up to 0x3c01.
  // 2^-11 = 0x1000, 3*2^-12 = 1.5 * 2^-11 = 0x1200, 1+2^-10 = 0x3c01.
  std::vector<uint16_t> a = {0x3c00, 0x3c01, 0x3c00, 0x0001, 0x8001};
  std::vector<uint16_t> b = {0x1000, 0x1000, 0x1200, 0x0001, 0x0001};
  expectReduce(DataType::kFloat16, RedOp::kSum, a, b, {0x3c00, 0x3c02, 0x3c01, 0x0002, 0x0000},
               "RNE");
  // Subnormal product rounding: 2^-24 * 0.5 = 2^-25 ties to 0; 2^-24 * 0.75 rounds up to 2^-24.
  std::vector<uint16_t> pa = {0x0001, 0x0001, 0x0003};
  std::vector<uint16_t> pb = {0x3800, 0x3a00, 0x3800};
  expectReduce(DataType::kFloat16, RedOp::kProd, pa, pb, {0x0000, 0x0001, 0x0002}, "RNE");
  // bfloat16: 1 + 2^-8 is halfway between 1 (0x3f80) and 1+2^-7 (0x3f81): ties to 0x3f80;
  // (1+2^-7) + 2^-8 ties up to 0x3f82. 2^-8 = 0x3b80.
  std::vector<uint16_t> ba = {0x3f80, 0x3f81, 0x7f7f};
  std::vector<uint16_t> bb = {0x3b80, 0x3b80, 0x7f7f};
  expectReduce(DataType::kBfloat16, RedOp::kSum, ba, bb, {0x3f80, 0x3f82, 0x7f80}, "RNE");
}

TEST_P(Semantics, IntegersWrapOnOverflow) {
  expectReduce<int8_t>(DataType::kInt8, RedOp::kSum, {127, -128, 100}, {1, -1, 100},
                       {-128, 127, -56}, "wrap");
  expectReduce<int8_t>(DataType::kInt8, RedOp::kProd, {16, -128, 11}, {16, -1, 13}, {0, -128, -113},
                       "wrap");
  expectReduce<uint8_t>(DataType::kUint8, RedOp::kSum, {255, 200}, {1, 100}, {0, 44}, "wrap");
  expectReduce<uint8_t>(DataType::kUint8, RedOp::kProd, {16, 255}, {16, 255}, {0, 1}, "wrap");
  const int32_t i32max = std::numeric_limits<int32_t>::max();
  const int32_t i32min = std::numeric_limits<int32_t>::min();
  expectReduce<int32_t>(DataType::kInt32, RedOp::kSum, {i32max, i32min}, {1, -1}, {i32min, i32max},
                        "wrap");
  expectReduce<int32_t>(DataType::kInt32, RedOp::kProd, {65536, i32min}, {65536, -1}, {0, i32min},
                        "wrap");
  expectReduce<uint32_t>(DataType::kUint32, RedOp::kSum, {0xffffffffu}, {2u}, {1u}, "wrap");
  const int64_t i64max = std::numeric_limits<int64_t>::max();
  const int64_t i64min = std::numeric_limits<int64_t>::min();
  expectReduce<int64_t>(DataType::kInt64, RedOp::kSum, {i64max, i64min}, {1, -1}, {i64min, i64max},
                        "wrap");
  expectReduce<int64_t>(DataType::kInt64, RedOp::kProd, {int64_t{1} << 32, 3},
                        {int64_t{1} << 32, i64max}, {0, i64max - 2}, "wrap");
  expectReduce<uint64_t>(DataType::kUint64, RedOp::kProd, {~uint64_t{0}}, {~uint64_t{0}}, {1},
                         "wrap");
  // Signedness of max/min.
  expectReduce<int8_t>(DataType::kInt8, RedOp::kMax, {-1, 5}, {1, -128}, {1, 5}, "signed");
  expectReduce<uint8_t>(DataType::kUint8, RedOp::kMax, {255, 5}, {1, 128}, {255, 128}, "unsigned");
  expectReduce<uint64_t>(DataType::kUint64, RedOp::kMin, {~uint64_t{0}, 3}, {1, 4}, {1, 3},
                         "unsigned");
  expectReduce<int64_t>(DataType::kInt64, RedOp::kMin, {i64min, 3}, {i64max, -4}, {i64min, -4},
                        "signed");
}

template <typename T>
void expectDivide(DataType dt, std::vector<T> in, int divisor, std::vector<T> want) {
  in = tile(in);
  want = tile(want);
  divideInPlace(in.data(), in.size(), dt, divisor);
  LOOM_EXPECT_SAME_ELEMENTS(
      dt, in.data(), want.data(), in.size(),
      std::string(isaName()) + " " + dtypeName(dt) + " / " + std::to_string(divisor));
}

TEST_P(Semantics, AvgDividesIntegersTowardZero) {
  expectDivide<int8_t>(DataType::kInt8, {-7, 7, -128, 127, -1, 5}, 2, {-3, 3, -64, 63, 0, 2});
  expectDivide<uint8_t>(DataType::kUint8, {255, 7, 1}, 3, {85, 2, 0});
  expectDivide<int32_t>(DataType::kInt32, {-7, 7, std::numeric_limits<int32_t>::min(), 2147483647},
                        4, {-1, 1, -536870912, 536870911});
  expectDivide<uint32_t>(DataType::kUint32, {0xffffffffu, 10u}, 2, {0x7fffffffu, 5u});
  expectDivide<uint32_t>(DataType::kUint32, {0xffffffffu, 0xfffffffeu}, 0x7fffffff, {2u, 2u});
  expectDivide<int64_t>(DataType::kInt64, {-9, std::numeric_limits<int64_t>::min()}, 8,
                        {-1, std::numeric_limits<int64_t>::min() / 8});
  expectDivide<uint64_t>(DataType::kUint64, {~uint64_t{0}}, 3, {~uint64_t{0} / 3});
  expectDivide<int32_t>(DataType::kInt32, {-7, 7}, 1, {-7, 7});
  expectDivide<int32_t>(DataType::kInt32, {-7, 7}, 0, {-7, 7});  // documented: unchanged
}

TEST_P(Semantics, AvgDividesFloatsExactlyAndRoundsHalves) {
  expectDivide<float>(DataType::kFloat32, {1.f, -3.f, kInfF, 0.f}, 3, {1.f / 3, -1.f, kInfF, 0.f});
  expectDivide<double>(DataType::kFloat64, {1.0, -3.0}, 3, {1.0 / 3, -1.0});
  // float16 1/3 in float32 is 0.333333343, nearest half 0x3555; 2^-24 / 2 ties to 0.
  expectDivide<uint16_t>(DataType::kFloat16, {0x3c00, 0x0001, 0x0003, 0x7c00}, 3,
                         {0x3555, 0x0000, 0x0001, 0x7c00});
  expectDivide<uint16_t>(DataType::kFloat16, {0x0001, 0x0003}, 2, {0x0000, 0x0002});
  // bfloat16 1/3 -> 0x3eab; 2/3 -> 0x3f2b.
  expectDivide<uint16_t>(DataType::kBfloat16, {0x3f80, 0x4000}, 3, {0x3eab, 0x3f2b});
}

TEST_P(Semantics, ExhaustiveHalfAndBf16PairsMatchScalar) {
  const size_t n = 65536;
  std::vector<uint16_t> a(n), b(n), got(n), want(n);
  std::mt19937_64 rng(5);
  for (size_t i = 0; i < n; ++i) a[i] = b[i] = static_cast<uint16_t>(i);
  for (int round = 0; round < 2; ++round) {
    std::shuffle(b.begin(), b.end(), rng);
    for (DataType dt : {DataType::kFloat16, DataType::kBfloat16}) {
      for (RedOp op : kernelOps()) {
        reduceScalar(want.data(), a.data(), b.data(), n, dt, op);
        reduce(got.data(), a.data(), b.data(), n, dt, op);
        LOOM_EXPECT_SAME_ELEMENTS(dt, got.data(), want.data(), n,
                                  std::string(isaName()) + " " + dtypeName(dt) + " " + opName(op));
      }
      for (int d : {2, 3, 7}) {
        want = a;
        got = a;
        divideScalar(want.data(), n, dt, d);
        divideInPlace(got.data(), n, dt, d);
        LOOM_EXPECT_SAME_ELEMENTS(dt, got.data(), want.data(), n,
                                  std::string(isaName()) + " " + dtypeName(dt) + " divide");
      }
    }
  }
}

TEST_P(Semantics, IntegerDivideMatchesScalarOnRandomInputs) {
  std::mt19937_64 rng(9);
  for (DataType dt : allDtypes()) {
    for (int d : {2, 3, 5, 8, 1000, 2147483647}) {
      size_t n = 4099;
      std::vector<uint8_t> got(n * dtypeSize(dt));
      fillRandom(dt, got.data(), n, rng);
      std::vector<uint8_t> want = got;
      divideScalar(want.data(), n, dt, d);
      divideInPlace(got.data(), n, dt, d);
      LOOM_EXPECT_SAME_ELEMENTS(dt, got.data(), want.data(), n,
                                std::string(dtypeName(dt)) + " / " + std::to_string(d));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, Semantics, ::testing::ValuesIn(supportedIsas()), isaParamName);

TEST(KernelIsa, DefaultIsBestTheCpuHasAndEnvCapsIt) {
  unsetenv("LOOM_KERNEL_ISA");
  params::resetCacheForTesting();
  reloadIsaFromParams();
  EXPECT_EQ(activeIsa(), cpuIsa());
  EXPECT_STREQ(kernels::isaName(), isaName(cpuIsa()));
  for (Isa isa : supportedIsas()) {
    setenv("LOOM_KERNEL_ISA", isaName(isa), 1);
    params::resetCacheForTesting();
    reloadIsaFromParams();
    EXPECT_EQ(activeIsa(), isa) << isaName(isa);
  }
  setenv("LOOM_KERNEL_ISA", "sse9", 1);  // unknown: warns, uses the best
  params::resetCacheForTesting();
  reloadIsaFromParams();
  EXPECT_EQ(activeIsa(), cpuIsa());
  unsetenv("LOOM_KERNEL_ISA");
  params::resetCacheForTesting();
  reloadIsaFromParams();
}

TEST(KernelIsa, CopyCopiesBytes) {
  std::vector<uint8_t> src(1000), dst(1000, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7);
  copy(dst.data() + 1, src.data() + 3, 997);
  EXPECT_EQ(std::memcmp(dst.data() + 1, src.data() + 3, 997), 0);
  EXPECT_EQ(dst[0], 0);
  copy(dst.data(), dst.data(), 10);  // same pointer: no-op
}

}  // namespace
}  // namespace loom::kernels::testing
