// Internal to kernels/: element operations, half/bfloat16 conversions and the dtype x op switch,
// shared by every ISA translation unit.
//
// Everything here has internal linkage (anonymous namespace) on purpose: each ISA file includes
// this header and compiles its own copy with its own -m flags. A template with external linkage
// instantiated in the AVX-512 file could otherwise be picked by the linker for the scalar path and
// crash on a CPU without AVX-512. For the same reason these files call no std:: functions.
//
// Semantics shared by all ISAs (the tests hold every ISA to the scalar path bit for bit):
//  - Integers wrap on overflow (two's complement), for sum and prod.
//  - max/min propagate NaN: if either input is NaN the result is NaN (the NaN from a when a is
//    NaN, else the one from b). For equal inputs, including +0 and -0, the result is b.
//  - sum/prod follow IEEE (Inf - Inf = NaN, etc.).
//  - float16/bfloat16: both inputs are widened to float32 exactly, the op runs in float32 and the
//    result is rounded to nearest, ties to even. Overflow gives Inf; NaN stays NaN (quiet).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/datatype.h"

// The element ops below are shared with the CUDA kernels (kernels/reduce_cuda.cu): under nvcc they
// are host and device functions, so the CPU tests cover the arithmetic the GPU runs.
#if defined(__CUDACC__)
#define LOOM_HD __host__ __device__
#else
#define LOOM_HD
#endif

namespace loom::kernels {
namespace {  // NOLINT(build/namespaces): see the header comment.

template <typename T>
LOOM_HD inline T ld(const T* p) {
  T v;
  __builtin_memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T>
LOOM_HD inline void st(T* p, T v) {
  __builtin_memcpy(p, &v, sizeof(T));
}
LOOM_HD inline uint32_t floatBits(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  return u;
}
LOOM_HD inline float bitsFloat(uint32_t u) {
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

// IEEE binary16 -> binary32, exact. NaN payloads are kept and made quiet (as F16C does).
LOOM_HD inline float halfToFloatInl(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0) {
    float mag = static_cast<float>(man) * 0x1p-24f;  // zero or subnormal: exact
    return bitsFloat(sign | floatBits(mag));
  }
  if (exp == 31) return bitsFloat(sign | 0x7f800000u | (man << 13) | (man != 0 ? 0x400000u : 0));
  return bitsFloat(sign | ((exp + 112) << 23) | (man << 13));
}

// binary32 -> binary16, round to nearest even; NaN -> quiet NaN with the top payload bits.
LOOM_HD inline uint16_t floatToHalfInl(float f) {
  uint32_t x = floatBits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) {
    if (ax > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520: Inf
  if (ax >= 0x38800000u) {                                              // normal (>= 2^-14)
    uint32_t r = ax - 0x38000000u;                                      // rebias 127 -> 15
    r += 0xfffu + ((r >> 13) & 1u);
    return static_cast<uint16_t>(sign | (r >> 13));
  }
  if (ax <= 0x33000000u) return static_cast<uint16_t>(sign);  // <= 2^-25: ties to 0
  uint32_t man = (ax & 0x7fffffu) | 0x800000u;
  uint32_t shift = 126u - (ax >> 23);  // 14..24
  uint32_t q = man >> shift;
  uint32_t rem = man & ((1u << shift) - 1);
  uint32_t halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
  return static_cast<uint16_t>(sign | q);
}

LOOM_HD inline float bf16ToFloatInl(uint16_t h) {
  return bitsFloat(static_cast<uint32_t>(h) << 16);
}

LOOM_HD inline uint16_t floatToBf16Inl(float f) {
  uint32_t x = floatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

struct HalfCvt {
  LOOM_HD static float toFloat(uint16_t h) { return halfToFloatInl(h); }
  LOOM_HD static uint16_t fromFloat(float f) { return floatToHalfInl(f); }
};
struct Bf16Cvt {
  LOOM_HD static float toFloat(uint16_t h) { return bf16ToFloatInl(h); }
  LOOM_HD static uint16_t fromFloat(float f) { return floatToBf16Inl(f); }
};

// Ops work on scalars and on GCC vector types alike. kWraps: integer arithmetic is done in the
// unsigned type of the same width so that overflow wraps instead of being undefined.
struct OpSum {
  static constexpr bool kWraps = true;
  template <typename X>
  LOOM_HD static X apply(X a, X b) {
    return a + b;
  }
};
struct OpProd {
  static constexpr bool kWraps = true;
  template <typename X>
  LOOM_HD static X apply(X a, X b) {
    return a * b;
  }
};
struct OpMax {
  static constexpr bool kWraps = false;
  template <typename X>
  LOOM_HD static X apply(X a, X b) {
    X r = a > b ? a : b;
    return a != a ? a : r;  // NaN in a wins; NaN in b already came through (a > NaN is false)
  }
};
struct OpMin {
  static constexpr bool kWraps = false;
  template <typename X>
  LOOM_HD static X apply(X a, X b) {
    X r = a < b ? a : b;
    return a != a ? a : r;
  }
};

template <typename T, bool kUnsigned>
struct ArithOf {
  using type = T;
};
template <typename T>
struct ArithOf<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <typename T, class Op>
using ArithT = typename ArithOf<T, Op::kWraps && std::is_integral_v<T>>::type;

// ---- scalar loops (the oracle, and the tails of the vector loops) ----
template <typename T, class Op>
void scalarPlain(T* d, const T* a, const T* b, size_t n) {
  for (size_t i = 0; i < n; ++i) st(d + i, static_cast<T>(Op::apply(ld(a + i), ld(b + i))));
}
template <class Cvt, class Op>
void scalarConv(uint16_t* d, const uint16_t* a, const uint16_t* b, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    float x = Cvt::toFloat(ld(a + i)), y = Cvt::toFloat(ld(b + i));
    st(d + i, Cvt::fromFloat(Op::apply(x, y)));
  }
}
template <typename T>
void scalarDivFloat(T* p, size_t n, T divisor) {
  for (size_t i = 0; i < n; ++i) st(p + i, static_cast<T>(ld(p + i) / divisor));
}
template <class Cvt>
void scalarDivConv(uint16_t* p, size_t n, float divisor) {
  for (size_t i = 0; i < n; ++i) st(p + i, Cvt::fromFloat(Cvt::toFloat(ld(p + i)) / divisor));
}
// divisor >= 2, so the quotient always fits T. Divided in 64 bits: T(divisor) could truncate.
template <typename T>
void scalarDivInt(T* p, size_t n, int divisor) {
  using W = std::conditional_t<std::is_same_v<T, uint64_t>, uint64_t, int64_t>;
  const W d = static_cast<W>(divisor);
  for (size_t i = 0; i < n; ++i) st(p + i, static_cast<T>(static_cast<W>(ld(p + i)) / d));
}

// K supplies plain<T, Op>, conv<Cvt, Op>, divFloat<T>, divConv<Cvt> and divInt<T>.
template <class K, class Op, typename T>
void reducePlain(void* d, const void* a, const void* b, size_t n) {
  using A = ArithT<T, Op>;
  K::template plain<A, Op>(static_cast<A*>(d), static_cast<const A*>(a), static_cast<const A*>(b),
                           n);
}
template <class K, class Op, class Cvt>
void reduceConv(void* d, const void* a, const void* b, size_t n) {
  K::template conv<Cvt, Op>(static_cast<uint16_t*>(d), static_cast<const uint16_t*>(a),
                            static_cast<const uint16_t*>(b), n);
}

template <class K, class Op>
void reduceByType(void* d, const void* a, const void* b, size_t n, DataType dt) {
  switch (dt) {
    case DataType::kInt8:
      reducePlain<K, Op, int8_t>(d, a, b, n);
      break;
    case DataType::kUint8:
      reducePlain<K, Op, uint8_t>(d, a, b, n);
      break;
    case DataType::kInt32:
      reducePlain<K, Op, int32_t>(d, a, b, n);
      break;
    case DataType::kUint32:
      reducePlain<K, Op, uint32_t>(d, a, b, n);
      break;
    case DataType::kInt64:
      reducePlain<K, Op, int64_t>(d, a, b, n);
      break;
    case DataType::kUint64:
      reducePlain<K, Op, uint64_t>(d, a, b, n);
      break;
    case DataType::kFloat32:
      reducePlain<K, Op, float>(d, a, b, n);
      break;
    case DataType::kFloat64:
      reducePlain<K, Op, double>(d, a, b, n);
      break;
    case DataType::kFloat16:
      reduceConv<K, Op, HalfCvt>(d, a, b, n);
      break;
    case DataType::kBfloat16:
      reduceConv<K, Op, Bf16Cvt>(d, a, b, n);
      break;
  }
}

template <class K>
void reduceDispatch(void* d, const void* a, const void* b, size_t n, DataType dt, RedOp op) {
  switch (op) {
    case RedOp::kProd:
      reduceByType<K, OpProd>(d, a, b, n, dt);
      break;
    case RedOp::kMax:
      reduceByType<K, OpMax>(d, a, b, n, dt);
      break;
    case RedOp::kMin:
      reduceByType<K, OpMin>(d, a, b, n, dt);
      break;
    default:
      reduceByType<K, OpSum>(d, a, b, n, dt);
      break;  // kSum, and kAvg's sum step
  }
}

// Integer divisors below 1 leave the buffer unchanged (avg divides by the rank count, >= 1).
template <class K>
void divideDispatch(void* buf, size_t n, DataType dt, int divisor) {
  if (n == 0) return;
  switch (dt) {
    case DataType::kFloat32:
      K::template divFloat<float>(static_cast<float*>(buf), n, static_cast<float>(divisor));
      return;
    case DataType::kFloat64:
      K::template divFloat<double>(static_cast<double*>(buf), n, static_cast<double>(divisor));
      return;
    case DataType::kFloat16:
      K::template divConv<HalfCvt>(static_cast<uint16_t*>(buf), n, static_cast<float>(divisor));
      return;
    case DataType::kBfloat16:
      K::template divConv<Bf16Cvt>(static_cast<uint16_t*>(buf), n, static_cast<float>(divisor));
      return;
    default:
      break;
  }
  if (divisor <= 1) return;
  switch (dt) {
    case DataType::kInt8:
      K::template divInt<int8_t>(static_cast<int8_t*>(buf), n, divisor);
      break;
    case DataType::kUint8:
      K::template divInt<uint8_t>(static_cast<uint8_t*>(buf), n, divisor);
      break;
    case DataType::kInt32:
      K::template divInt<int32_t>(static_cast<int32_t*>(buf), n, divisor);
      break;
    case DataType::kUint32:
      K::template divInt<uint32_t>(static_cast<uint32_t*>(buf), n, divisor);
      break;
    case DataType::kInt64:
      scalarDivInt<int64_t>(static_cast<int64_t*>(buf), n, divisor);
      break;
    case DataType::kUint64:
      scalarDivInt<uint64_t>(static_cast<uint64_t*>(buf), n, divisor);
      break;
    default:
      break;
  }
}

}  // namespace
}  // namespace loom::kernels
