#include "api/handles.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#include "api/comm.h"
#include "api/stream.h"

namespace loom::api {
namespace {

std::mutex& retiredMu() {
  static std::mutex m;
  return m;
}
// Retired blocks stay reachable (leak checkers do not report them) and are never reused.
std::vector<void*>& retired() {
  static auto* v = new std::vector<void*>();
  return *v;
}

}  // namespace

void* allocateHandle(size_t bytes) noexcept { return std::malloc(bytes); }

void retireHandle(void* p) noexcept {
  if (p == nullptr) return;
  std::lock_guard<std::mutex> g(retiredMu());
  try {
    retired().push_back(p);
  } catch (...) {  // out of memory: the block is simply not tracked (still never reused)
  }
}

}  // namespace loom::api

void* loomComm::operator new(size_t bytes) {
  void* p = loom::api::allocateHandle(bytes);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* loomComm::operator new(size_t bytes, const std::nothrow_t&) noexcept {
  return loom::api::allocateHandle(bytes);
}
void loomComm::operator delete(void* p) noexcept { loom::api::retireHandle(p); }

void* loomStream::operator new(size_t bytes) {
  void* p = loom::api::allocateHandle(bytes);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* loomStream::operator new(size_t bytes, const std::nothrow_t&) noexcept {
  return loom::api::allocateHandle(bytes);
}
void loomStream::operator delete(void* p) noexcept { loom::api::retireHandle(p); }
