// CPU reduction kernels: every dtype x op, vectorised with runtime dispatch (AVX-512, AVX2,
// scalar). float16/bfloat16 are reduced in float32 and rounded to nearest even on the way back.
// kAvg is not a kernel op: reduce with kSum, then call divideInPlace (integers truncate).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/datatype.h"

namespace loom::kernels {

// dst[i] = a[i] (op) b[i] for n elements. dst may alias a or b (exactly, not partially).
// op must not be kAvg (treated as kSum).
void reduce(void* dst, const void* a, const void* b, size_t n, DataType dt, RedOp op);

// dst[i] = dst[i] (op) src[i].
inline void reduceInto(void* dst, const void* src, size_t n, DataType dt, RedOp op) {
  reduce(dst, dst, src, n, dt, op);
}

// buf[i] = buf[i] / divisor (integers: truncating division; floats: exact IEEE division, halves
// rounded to nearest even).
void divideInPlace(void* buf, size_t n, DataType dt, int divisor);

// Large copy (memcpy; a single place to tune non-temporal stores later).
void copy(void* dst, const void* src, size_t bytes);

// Name of the instruction set the dispatcher picked: "avx512", "avx2" or "scalar".
// LOOM_KERNEL_ISA (scalar|avx2|avx512) may lower it, for tests and benchmarks.
const char* isaName();

// Scalar oracle used by tests (always the plain C++ path).
void reduceScalar(void* dst, const void* a, const void* b, size_t n, DataType dt, RedOp op);

// half/bfloat16 <-> float conversions (round to nearest even), exposed for tests and other layers.
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bf16ToFloat(uint16_t h);
uint16_t floatToBf16(float f);

}  // namespace loom::kernels
