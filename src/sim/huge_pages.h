// Allocation in transparent huge pages for the simulator's big arrays touched at random.
#pragma once

#include <cstddef>
#include <cstdlib>

namespace loom::sim {

// Allocator for the engine's big arrays touched at random (connections, flows, shapes' steps):
// blocks of 4 MiB and more are aligned to 2 MiB and advised as transparent huge pages, so that
// random accesses over hundreds of MB do not miss the TLB on every touch (a hint: without THP,
// plain pages).
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT: rebinding
  T* allocate(size_t n);
  void deallocate(T* p, size_t) { std::free(p); }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const HugePageAllocator<U>&) const {
    return false;
  }
};
void* allocHuge(size_t bytes);  // huge_pages.cc; throws std::bad_alloc

template <typename T>
T* HugePageAllocator<T>::allocate(size_t n) {
  return static_cast<T*>(allocHuge(n * sizeof(T)));
}

}  // namespace loom::sim
