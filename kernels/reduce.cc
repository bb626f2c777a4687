// Runtime dispatch of the CPU reduce kernels: the best ISA the CPU has, capped by LOOM_KERNEL_ISA.
// The choice is made once (first call) and cached in an atomic pointer, so the hot path costs one
// load and one indirect call.
#include "kernels/reduce.h"

#include <atomic>
#include <cstring>
#include <string>

#include "core/log.h"
#include "core/params.h"
#include "kernels/dispatch.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#define LOOM_KERNELS_X86 1
#else
#define LOOM_KERNELS_X86 0
#endif

namespace loom::kernels {
namespace {

struct Table {
  Isa isa;
  ReduceFn reduce;
  DivideFn divide;
};

#if LOOM_KERNELS_X86
const Table kTables[] = {{Isa::kScalar, reduceScalar, divideScalar},
                         {Isa::kAvx2, reduceAvx2, divideAvx2},
                         {Isa::kAvx512, reduceAvx512, divideAvx512}};
#else
const Table kTables[] = {{Isa::kScalar, reduceScalar, divideScalar}};
#endif

std::atomic<const Table*> g_table{nullptr};

const Table* select(Isa want) {
  Isa cpu = cpuIsa();
  if (static_cast<int>(want) > static_cast<int>(cpu)) want = cpu;
  const Table* t = &kTables[static_cast<int>(want)];
  g_table.store(t, std::memory_order_release);
  return t;
}

Isa isaFromParams() {
  std::string v = params::kernelIsa();
  Isa cpu = cpuIsa();
  if (v.empty()) return cpu;
  Isa want;
  if (!parseIsa(v.c_str(), &want)) {
    LOOM_WARN(INIT, "LOOM_KERNEL_ISA=", v, " is not scalar, avx2 or avx512; using ", isaName(cpu));
    return cpu;
  }
  if (static_cast<int>(want) > static_cast<int>(cpu)) {
    LOOM_WARN(INIT, "LOOM_KERNEL_ISA=", v, " is not supported by this CPU; using ", isaName(cpu));
    return cpu;
  }
  return want;
}

inline const Table* table() {
  const Table* t = g_table.load(std::memory_order_acquire);
  return t != nullptr ? t : select(isaFromParams());
}

}  // namespace

const char* isaName(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return "avx512";
    case Isa::kAvx2:
      return "avx2";
    default:
      return "scalar";
  }
}

bool parseIsa(const char* name, Isa* out) {
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (std::strcmp(name, isaName(isa)) == 0) {
      *out = isa;
      return true;
    }
  }
  return false;
}

Isa cpuIsa() {
#if LOOM_KERNELS_X86
  // libgcc's checks include the OS (XSAVE state) support for AVX and AVX-512 registers.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) return Isa::kAvx512;
  // F16C via cpuid: clang's __builtin_cpu_supports does not know "f16c". (AVX2 implies the OS
  // saves YMM state, which F16C also needs.)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  if (__builtin_cpu_supports("avx2") && f16c) return Isa::kAvx2;
#endif
  return Isa::kScalar;
}

Isa activeIsa() { return table()->isa; }
void reloadIsaFromParams() { select(isaFromParams()); }
Isa setIsaForTesting(Isa isa) { return select(isa)->isa; }
const char* isaName() { return isaName(activeIsa()); }

void reduce(void* dst, const void* a, const void* b, size_t n, DataType dt, RedOp op) {
  if (n == 0) return;
  table()->reduce(dst, a, b, n, dt, op);
}

void divideInPlace(void* buf, size_t n, DataType dt, int divisor) {
  if (n == 0) return;
  table()->divide(buf, n, dt, divisor);
}

void copy(void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || dst == src) return;
  std::memcpy(dst, src, bytes);
}

}  // namespace loom::kernels
