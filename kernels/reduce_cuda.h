// GPU reduction kernels: the same element ops as the CPU kernels (kernels/ops_inl.h, compiled for
// host and device), so every dtype x op gives the CPU's result bit for bit (integers wrap,
// float16/bfloat16 are reduced in float32 and rounded to nearest even, no fused multiply-add).
// Loads and stores are 16 bytes wide when all pointers are 16-byte aligned.
//
// Plain C++ on purpose (no CUDA headers): callers pass a cudaStream_t as void*. In a build without
// CUDA (LOOM_CUDA=OFF or no toolkit) every call returns an error saying so.
#pragma once

#include <cstddef>
#include <string>

#include "core/datatype.h"
#include "core/status.h"

namespace loom::kernels::cuda {

// True when loom was built with CUDA and the process sees at least one CUDA device; otherwise
// false, with the reason in *why (for example "built without CUDA" or "no CUDA device: ...").
bool deviceAvailable(std::string* why);

// dst[i] = a[i] (op) b[i] for n elements of device memory, queued on `stream` (a cudaStream_t;
// nullptr is the legacy default stream). Returns once the kernel is queued. kAvg reduces as kSum.
Status reduce(void* dst, const void* a, const void* b, size_t n, DataType dt, RedOp op,
              void* stream);

// buf[i] /= divisor on the device, with divideInPlace's rules (kernels/reduce.h).
Status divideInPlace(void* buf, size_t n, DataType dt, int divisor, void* stream);

}  // namespace loom::kernels::cuda
