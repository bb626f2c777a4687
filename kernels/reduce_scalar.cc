// The scalar kernels: the fallback on CPUs without AVX2, the oracle the tests compare every ISA
// with, and the public float16/bfloat16 conversions. Compiled with the default flags.
#include "kernels/dispatch.h"
#include "kernels/ops_inl.h"
#include "kernels/reduce.h"

namespace loom::kernels {
namespace {

struct ScalarKernels {
  template <typename T, class Op>
  static void plain(T* d, const T* a, const T* b, size_t n) {
    scalarPlain<T, Op>(d, a, b, n);
  }
  template <class Cvt, class Op>
  static void conv(uint16_t* d, const uint16_t* a, const uint16_t* b, size_t n) {
    scalarConv<Cvt, Op>(d, a, b, n);
  }
  template <typename T>
  static void divFloat(T* p, size_t n, T divisor) {
    scalarDivFloat<T>(p, n, divisor);
  }
  template <class Cvt>
  static void divConv(uint16_t* p, size_t n, float divisor) {
    scalarDivConv<Cvt>(p, n, divisor);
  }
  template <typename T>
  static void divInt(T* p, size_t n, int divisor) {
    scalarDivInt<T>(p, n, divisor);
  }
};

}  // namespace

void reduceScalar(void* dst, const void* a, const void* b, size_t n, DataType dt, RedOp op) {
  reduceDispatch<ScalarKernels>(dst, a, b, n, dt, op);
}

void divideScalar(void* buf, size_t n, DataType dt, int divisor) {
  divideDispatch<ScalarKernels>(buf, n, dt, divisor);
}

float halfToFloat(uint16_t h) { return halfToFloatInl(h); }
uint16_t floatToHalf(float f) { return floatToHalfInl(f); }
float bf16ToFloat(uint16_t h) { return bf16ToFloatInl(h); }
uint16_t floatToBf16(float f) { return floatToBf16Inl(f); }

}  // namespace loom::kernels
