// CPU reduction kernels: every dtype x op, vectorised with runtime dispatch (AVX-512, AVX2,
// scalar). float16/bfloat16 are reduced in float32 and rounded to nearest even on the way back.
// kAvg is not a kernel op: reduce with kSum, then call divideInPlace (integers truncate).
//
// Results are identical on every ISA (the tests check each ISA against reduceScalar bit for bit):
//  - Integers: sum and prod wrap around (two's complement); max/min respect signedness.
//  - Floats, sum/prod: IEEE with round to nearest even (Inf - Inf = NaN, overflow = Inf).
//  - Floats, max/min: NaN propagates. If a[i] is NaN the result is a[i]; else if b[i] is NaN it is
//    b[i]. For equal inputs the result is b[i], so max(+0, -0) = -0 and max(-0, +0) = +0.
//  - float16/bfloat16: each input is widened to float32 exactly, the op runs in float32, and the
//    result is rounded to nearest even (overflow gives Inf; NaN stays a quiet NaN, keeping the top
//    payload bits, as x86 F16C does).
//  - Which NaN payload a sum/prod of NaNs carries is not specified; compare NaNs with isnan.
// LOOM_KERNEL_ISA=scalar|avx2|avx512 caps the ISA (kernels/dispatch.h forces one in tests).
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
// rounded to nearest even). For avg the sum is formed first, so an integer sum that wrapped is
// divided as wrapped. Integer types need divisor >= 1 (with divisor < 1 the buffer is left
// unchanged; avg divides by the rank count). Float types divide by any divisor, 0 included.
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
