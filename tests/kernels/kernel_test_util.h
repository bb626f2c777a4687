// Helpers shared by the kernel tests: the ISAs this CPU can run, random inputs per dtype and a
// result comparison that is bit-exact except that any NaN matches any NaN.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/datatype.h"
#include "core/params.h"
#include "kernels/dispatch.h"
#include "kernels/reduce.h"

namespace loom::kernels::testing {

inline std::vector<Isa> supportedIsas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (static_cast<int>(isa) <= static_cast<int>(cpuIsa())) out.push_back(isa);
  }
  return out;
}

inline std::string isaParamName(const ::testing::TestParamInfo<Isa>& info) {
  return isaName(info.param);
}

inline const std::vector<DataType>& allDtypes() {
  static const std::vector<DataType> v = {
      DataType::kInt8,    DataType::kUint8,  DataType::kInt32,   DataType::kUint32,
      DataType::kInt64,   DataType::kUint64, DataType::kFloat16, DataType::kBfloat16,
      DataType::kFloat32, DataType::kFloat64};
  return v;
}
inline const std::vector<RedOp>& kernelOps() {
  static const std::vector<RedOp> v = {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin};
  return v;
}

// Fixture base: runs each test with the ISA given as parameter, restores the default after.
class IsaTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override { ASSERT_EQ(setIsaForTesting(GetParam()), GetParam()); }
  void TearDown() override { reloadIsaFromParams(); }
};

// Random bytes for integers and 16-bit floats (every bit pattern, NaN/Inf/subnormals included);
// for float32/float64 half the elements are "ordinary" numbers, half random bit patterns.
inline void fillRandom(DataType dt, void* buf, size_t n, std::mt19937_64& rng) {
  auto* bytes = static_cast<uint8_t*>(buf);
  size_t es = dtypeSize(dt);
  for (size_t i = 0; i < n; ++i) {
    uint64_t bits = rng();
    if ((dt == DataType::kFloat32 || dt == DataType::kFloat64) && (bits & 1)) {
      double v = std::ldexp(static_cast<double>(static_cast<int64_t>(rng()) >> 40),
                            static_cast<int>(rng() % 40) - 30);
      if (dt == DataType::kFloat32) {
        float f = static_cast<float>(v);
        std::memcpy(bytes + i * es, &f, 4);
      } else {
        std::memcpy(bytes + i * es, &v, 8);
      }
      continue;
    }
    std::memcpy(bytes + i * es, &bits, es);
  }
}

inline bool isNanBits(DataType dt, const uint8_t* p) {
  switch (dt) {
    case DataType::kFloat32: {
      float f;
      std::memcpy(&f, p, 4);
      return std::isnan(f);
    }
    case DataType::kFloat64: {
      double d;
      std::memcpy(&d, p, 8);
      return std::isnan(d);
    }
    case DataType::kFloat16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return (h & 0x7fff) > 0x7c00;
    }
    case DataType::kBfloat16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return (h & 0x7fff) > 0x7f80;
    }
    default:
      return false;
  }
}

inline std::string hexBytes(const uint8_t* p, size_t es) {
  static const char* kHex = "0123456789abcdef";
  std::string s = "0x";
  for (size_t i = es; i-- > 0;) {
    s += kHex[p[i] >> 4];
    s += kHex[p[i] & 15];
  }
  return s;
}

// Index of the first element where got and want differ (bitwise, NaN == NaN), or n.
inline size_t firstMismatch(DataType dt, const void* got, const void* want, size_t n) {
  size_t es = dtypeSize(dt);
  auto* g = static_cast<const uint8_t*>(got);
  auto* w = static_cast<const uint8_t*>(want);
  for (size_t i = 0; i < n; ++i) {
    if (std::memcmp(g + i * es, w + i * es, es) == 0) continue;
    if (isNanBits(dt, g + i * es) && isNanBits(dt, w + i * es)) continue;
    return i;
  }
  return n;
}

// "" when got == want element for element, else a description of the first difference.
inline std::string mismatch(DataType dt, const void* got, const void* want, size_t n) {
  size_t bad = firstMismatch(dt, got, want, n);
  if (bad == n) return "";
  size_t es = dtypeSize(dt);
  return "element " + std::to_string(bad) + " of " + std::to_string(n) + ": got " +
         hexBytes(static_cast<const uint8_t*>(got) + bad * es, es) + " want " +
         hexBytes(static_cast<const uint8_t*>(want) + bad * es, es);
}

#define LOOM_EXPECT_SAME_ELEMENTS(dt, got, want, n, what) \
  EXPECT_EQ(::loom::kernels::testing::mismatch(dt, got, want, n), "") << (what)

}  // namespace loom::kernels::testing
