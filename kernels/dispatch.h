// Internal: which instruction set the CPU reduce kernels run with, and the per-ISA entry points.
// reduce.h is the interface for the rest of loom; tests and benchmarks use this header to force an
// ISA. Each ISA lives in its own translation unit compiled with its own -m flags (CMakeLists.txt),
// and only the functions declared here leave it, so no AVX code can leak into the generic path.
#pragma once

#include <cstddef>

#include "core/datatype.h"

namespace loom::kernels {

enum class Isa : int { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };

const char* isaName(Isa isa);
// The best ISA this CPU (and OS) supports: avx512 needs AVX-512F+BW, avx2 needs AVX2+F16C.
Isa cpuIsa();
// The ISA reduce()/divideInPlace() use now.
Isa activeIsa();
// Re-reads LOOM_KERNEL_ISA (after params::resetCacheForTesting) and picks the ISA again.
void reloadIsaFromParams();
// Forces an ISA (capped at cpuIsa()); returns the one actually selected.
Isa setIsaForTesting(Isa isa);
// Parses "scalar", "avx2", "avx512"; returns false for anything else.
bool parseIsa(const char* name, Isa* out);

using ReduceFn = void (*)(void* dst, const void* a, const void* b, size_t n, DataType dt, RedOp op);
using DivideFn = void (*)(void* buf, size_t n, DataType dt, int divisor);

// Per-ISA kernels; callers must only call the ones cpuIsa() allows.
void reduceAvx2(void* dst, const void* a, const void* b, size_t n, DataType dt, RedOp op);
void divideAvx2(void* buf, size_t n, DataType dt, int divisor);
void reduceAvx512(void* dst, const void* a, const void* b, size_t n, DataType dt, RedOp op);
void divideAvx512(void* buf, size_t n, DataType dt, int divisor);
void divideScalar(void* buf, size_t n, DataType dt, int divisor);

}  // namespace loom::kernels
