#include "sim/huge_pages.h"

#include <sys/mman.h>

#include <new>

namespace loom::sim {

void* allocHuge(size_t bytes) {
  constexpr size_t kHuge = size_t{2} << 20;
  void* p = nullptr;
  if (bytes >= 2 * kHuge) {
    size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    p = std::aligned_alloc(kHuge, rounded);
    if (p) madvise(p, rounded, MADV_HUGEPAGE);
  } else {  // a cache line apart, at least (types aligned to one)
    p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + (bytes == 0 ? 64 : 0));
  }
  if (!p) throw std::bad_alloc();
  return p;
}

}  // namespace loom::sim
