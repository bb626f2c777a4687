// Internal to kernels/: the vector kernels, written once with GCC vector extensions and compiled
// per ISA. The including file defines LOOM_VB (vector bytes: 32 or 64) and, before including,
// loadHalfVec/storeHalfVec (float16 <-> float32 for one vector, round to nearest even).
// Internal linkage throughout, for the reason given in ops_inl.h.
#pragma once

#include "kernels/ops_inl.h"

#ifndef LOOM_VB
#error "define LOOM_VB before including kernels/simd_inl.h"
#endif

namespace loom::kernels {
namespace {  // NOLINT(build/namespaces)

template <typename T, size_t kBytes = LOOM_VB>
struct VecOf {
  typedef T type __attribute__((vector_size(kBytes)));
};
template <typename T>
using Vec = typename VecOf<T>::type;
using VecF = Vec<float>;

template <typename V, typename T>
inline V vld(const T* p) {
  V v;
  __builtin_memcpy(&v, p, sizeof(V));
  return v;
}
template <typename V, typename T>
inline void vst(T* p, V v) {
  __builtin_memcpy(p, &v, sizeof(V));
}

// bfloat16 without shuffles: a vector of 32-bit lanes holds two bf16 values; the even one
// (low half) widens with a shift, the odd one (high half) with a mask. The op runs on both float
// vectors and the two rounded results are merged back into the same lanes, so the element order
// never changes and no cross-lane instruction is needed.
using VecU32 = Vec<uint32_t>;
inline VecF bf16Even(VecU32 x) { return reinterpret_cast<VecF>(x << 16); }
inline VecF bf16Odd(VecU32 x) { return reinterpret_cast<VecF>(x & 0xffff0000u); }
// Rounds each float to bfloat16 (nearest even; NaN made quiet) in the upper 16 bits of its lane.
inline VecU32 bf16RoundHigh(VecF f) {
  auto x = reinterpret_cast<VecU32>(f);
  VecU32 rounded = x + 0x7fffu + ((x >> 16) & 1u);
  VecU32 quiet = x | 0x400000u;
  return f != f ? quiet : rounded;
}
inline VecU32 bf16Merge(VecF even, VecF odd) {
  return (bf16RoundHigh(even) >> 16) | (bf16RoundHigh(odd) & 0xffff0000u);
}

struct HalfVec : HalfCvt {
  static VecF load(const uint16_t* p) { return loadHalfVec(p); }
  static void store(uint16_t* p, VecF v) { storeHalfVec(p, v); }
};

struct SimdKernels {
  // Four vectors per iteration keeps enough loads in flight to stay memory-bound. dst may equal a
  // or b: every element is loaded before the store that overwrites it.
  template <typename T, class Op>
  static void plain(T* d, const T* a, const T* b, size_t n) {
    using V = Vec<T>;
    constexpr size_t kW = sizeof(V) / sizeof(T);
    size_t i = 0;
    for (; i + 4 * kW <= n; i += 4 * kW) {
      V x0 = vld<V>(a + i), x1 = vld<V>(a + i + kW);
      V x2 = vld<V>(a + i + 2 * kW), x3 = vld<V>(a + i + 3 * kW);
      V y0 = vld<V>(b + i), y1 = vld<V>(b + i + kW);
      V y2 = vld<V>(b + i + 2 * kW), y3 = vld<V>(b + i + 3 * kW);
      vst(d + i, Op::apply(x0, y0));
      vst(d + i + kW, Op::apply(x1, y1));
      vst(d + i + 2 * kW, Op::apply(x2, y2));
      vst(d + i + 3 * kW, Op::apply(x3, y3));
    }
    for (; i + kW <= n; i += kW) vst(d + i, Op::apply(vld<V>(a + i), vld<V>(b + i)));
    scalarPlain<T, Op>(d + i, a + i, b + i, n - i);
  }

  template <class Cvt, class Op>
  static void conv(uint16_t* d, const uint16_t* a, const uint16_t* b, size_t n) {
    if constexpr (std::is_same_v<Cvt, Bf16Cvt>) {
      bf16<Op>(d, a, b, n);
      return;
    }
    using C = HalfVec;
    constexpr size_t kW = sizeof(VecF) / sizeof(float);
    size_t i = 0;
    for (; i + 2 * kW <= n; i += 2 * kW) {
      VecF x0 = C::load(a + i), x1 = C::load(a + i + kW);
      VecF y0 = C::load(b + i), y1 = C::load(b + i + kW);
      C::store(d + i, Op::apply(x0, y0));
      C::store(d + i + kW, Op::apply(x1, y1));
    }
    for (; i + kW <= n; i += kW) C::store(d + i, Op::apply(C::load(a + i), C::load(b + i)));
    scalarConv<Cvt, Op>(d + i, a + i, b + i, n - i);
  }

  template <typename T>
  static void divFloat(T* p, size_t n, T divisor) {
    using V = Vec<T>;
    constexpr size_t kW = sizeof(V) / sizeof(T);
    size_t i = 0;
    for (; i + kW <= n; i += kW) vst(p + i, vld<V>(p + i) / divisor);
    scalarDivFloat<T>(p + i, n - i, divisor);
  }

  template <class Op>
  static void bf16(uint16_t* d, const uint16_t* a, const uint16_t* b, size_t n) {
    constexpr size_t kW = sizeof(VecU32) / sizeof(uint16_t);
    size_t i = 0;
    for (; i + 2 * kW <= n; i += 2 * kW) {
      VecU32 x0 = vld<VecU32>(a + i), x1 = vld<VecU32>(a + i + kW);
      VecU32 y0 = vld<VecU32>(b + i), y1 = vld<VecU32>(b + i + kW);
      vst(d + i,
          bf16Merge(Op::apply(bf16Even(x0), bf16Even(y0)), Op::apply(bf16Odd(x0), bf16Odd(y0))));
      vst(d + i + kW,
          bf16Merge(Op::apply(bf16Even(x1), bf16Even(y1)), Op::apply(bf16Odd(x1), bf16Odd(y1))));
    }
    for (; i + kW <= n; i += kW) {
      VecU32 x = vld<VecU32>(a + i), y = vld<VecU32>(b + i);
      vst(d + i, bf16Merge(Op::apply(bf16Even(x), bf16Even(y)), Op::apply(bf16Odd(x), bf16Odd(y))));
    }
    scalarConv<Bf16Cvt, Op>(d + i, a + i, b + i, n - i);
  }

  template <class Cvt>
  static void divConv(uint16_t* p, size_t n, float divisor) {
    size_t i = 0;
    if constexpr (std::is_same_v<Cvt, Bf16Cvt>) {
      constexpr size_t kW = sizeof(VecU32) / sizeof(uint16_t);
      for (; i + kW <= n; i += kW) {
        VecU32 x = vld<VecU32>(p + i);
        vst(p + i, bf16Merge(bf16Even(x) / divisor, bf16Odd(x) / divisor));
      }
    } else {
      constexpr size_t kW = sizeof(VecF) / sizeof(float);
      for (; i + kW <= n; i += kW) HalfVec::store(p + i, HalfVec::load(p + i) / divisor);
    }
    scalarDivConv<Cvt>(p + i, n - i, divisor);
  }

  // 8- and 32-bit integers (divisor >= 2): the double quotient of two such integers is never
  // rounded across an integer (|q| < 2^32 and q's distance to an integer is >= 1/divisor, far more
  // than q's rounding error), so truncating it gives the exact truncated quotient.
  template <typename T>
  static void divInt(T* p, size_t n, int divisor) {
    using VD = Vec<double>;
    constexpr size_t kW = sizeof(VD) / sizeof(double);
    using VT = typename VecOf<T, kW * sizeof(T)>::type;
    using VI = typename VecOf<int32_t, kW * 4>::type;
    const double d = divisor;
    size_t i = 0;
    for (; i + kW <= n; i += kW) {
      VD q = __builtin_convertvector(vld<VT>(p + i), VD) / d;
      vst(p + i, __builtin_convertvector(__builtin_convertvector(q, VI), VT));
    }
    scalarDivInt<T>(p + i, n - i, divisor);
  }
};

}  // namespace
}  // namespace loom::kernels
