// AVX-512 kernels (F and BW). Compiled with -mavx512f -mavx512bw (kernels/CMakeLists.txt); only
// called when cpuIsa() says the CPU has AVX-512F and AVX-512BW.
#include "kernels/dispatch.h"

#if defined(__x86_64__) && defined(__GNUC__)
#if !defined(__AVX512F__) || !defined(__AVX512BW__)
#error "reduce_avx512.cc must be compiled with -mavx512f -mavx512bw"
#endif
#include <immintrin.h>

#define LOOM_VB 64

namespace loom::kernels {
namespace {  // NOLINT(build/namespaces)

// The zero-masked forms with a full mask are the same instructions; the unmasked intrinsics trip a
// GCC 12 -Wmaybe-uninitialized false positive (their _mm512_undefined_* pass-through operand).
inline __m512 loadHalfVec(const uint16_t* p) {
  return _mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
inline void storeHalfVec(uint16_t* p, __m512 v) {
  _mm256_storeu_si256(
      reinterpret_cast<__m256i*>(p),
      _mm512_maskz_cvtps_ph(0xffff, v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

}  // namespace
}  // namespace loom::kernels

#include "kernels/simd_inl.h"

namespace loom::kernels {

void reduceAvx512(void* dst, const void* a, const void* b, size_t n, DataType dt, RedOp op) {
  reduceDispatch<SimdKernels>(dst, a, b, n, dt, op);
}
void divideAvx512(void* buf, size_t n, DataType dt, int divisor) {
  divideDispatch<SimdKernels>(buf, n, dt, divisor);
}

}  // namespace loom::kernels
#endif
