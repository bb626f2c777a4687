// AVX2 kernels (+ F16C for float16). Compiled with -mavx2 -mf16c (kernels/CMakeLists.txt); only
// called when cpuIsa() says the CPU has both.
#include "kernels/dispatch.h"

#if defined(__x86_64__) && defined(__GNUC__)
#if !defined(__AVX2__) || !defined(__F16C__)
#error "reduce_avx2.cc must be compiled with -mavx2 -mf16c"
#endif
#include <immintrin.h>

#define LOOM_VB 32

namespace loom::kernels {
namespace {  // NOLINT(build/namespaces)

inline __m256 loadHalfVec(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline void storeHalfVec(uint16_t* p, __m256 v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                   _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

}  // namespace
}  // namespace loom::kernels

#include "kernels/simd_inl.h"

namespace loom::kernels {

void reduceAvx2(void* dst, const void* a, const void* b, size_t n, DataType dt, RedOp op) {
  reduceDispatch<SimdKernels>(dst, a, b, n, dt, op);
}
void divideAvx2(void* buf, size_t n, DataType dt, int divisor) {
  divideDispatch<SimdKernels>(buf, n, dt, divisor);
}

}  // namespace loom::kernels
#endif
