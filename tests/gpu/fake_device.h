// An in-process fake of the CUDA driver calls loom uses (core/cuda_driver.h), for testing the
// device-memory paths on machines without a GPU. "Device memory" is a memfd mapped twice: the
// address handed to loom is mapped PROT_NONE, so any direct access by loom crashes the test, and
// the fake driver copies through a second, readable view, as a real driver copies over PCIe.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "core/cuda_driver.h"

namespace loom::testing {

class FakeDevice {
 public:
  explicit FakeDevice(size_t bytes) : bytes_(bytes) {
    int fd = memfd_create("loom-fake-device", 0);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(bytes)) != 0) return;
    dev_ = static_cast<uint8_t*>(mmap(nullptr, bytes, PROT_NONE, MAP_SHARED, fd, 0));
    view_ = static_cast<uint8_t*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    close(fd);
    current() = this;
    api_ = {&attr, &copy, &hostAlloc, &freeHost, &errorString, &setCtx};
    cuda::setDriverForTesting(&api_);
  }
  ~FakeDevice() {
    cuda::setDriverForTesting(nullptr);
    current() = nullptr;
    munmap(dev_, bytes_);
    munmap(view_, bytes_);
  }
  bool ok() const { return dev_ != MAP_FAILED && view_ != MAP_FAILED && dev_ && view_; }
  // Device address of byte `offset`, and the test's own readable view of a device address.
  void* dev(size_t offset) { return dev_ + offset; }
  template <typename T>
  T* view(const void* devPtr) {
    return reinterpret_cast<T*>(view_ + (static_cast<const uint8_t*>(devPtr) - dev_));
  }
  int copies() const { return copies_.load(); }
  void setManaged(bool m) { managed_ = m; }

 private:
  static FakeDevice*& current() {
    static FakeDevice* d = nullptr;
    return d;
  }
  bool owns(uintptr_t a) const {
    auto b = reinterpret_cast<uintptr_t>(dev_);
    return a >= b && a < b + bytes_;
  }
  uint8_t* translate(uintptr_t a) {
    return owns(a) ? view_ + (a - reinterpret_cast<uintptr_t>(dev_))
                   : reinterpret_cast<uint8_t*>(a);
  }
  static int attr(void* data, int attribute, uintptr_t ptr) {
    FakeDevice* d = current();
    if (!d->owns(ptr)) return 1;  // CUDA_ERROR_INVALID_VALUE: not CUDA memory
    if (attribute == cuda::kAttrMemoryType) *static_cast<unsigned*>(data) = cuda::kMemoryTypeDevice;
    if (attribute == cuda::kAttrIsManaged) *static_cast<unsigned*>(data) = d->managed_ ? 1 : 0;
    if (attribute == cuda::kAttrContext) *static_cast<void**>(data) = d;
    return 0;
  }
  static int copy(uintptr_t dst, uintptr_t src, size_t bytes) {
    FakeDevice* d = current();
    std::memmove(d->translate(dst), d->translate(src), bytes);
    d->copies_++;
    return 0;
  }
  static int hostAlloc(void** p, size_t bytes, unsigned) {
    *p = malloc(bytes);
    return *p ? 0 : 2;
  }
  static int freeHost(void* p) {
    free(p);
    return 0;
  }
  static int errorString(int, const char** s) {
    *s = "fake CUDA error";
    return 0;
  }
  static int setCtx(void* ctx) { return ctx == current() ? 0 : 201; }  // CUDA_ERROR_INVALID_CONTEXT

  size_t bytes_;
  uint8_t* dev_ = nullptr;
  uint8_t* view_ = nullptr;
  bool managed_ = false;
  std::atomic<int> copies_{0};
  cuda::DriverApi api_{};
};

}  // namespace loom::testing
