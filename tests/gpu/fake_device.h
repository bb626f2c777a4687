// An in-process fake of the CUDA driver calls loom uses (core/cuda_driver.h), for testing the
// device-memory paths on machines without a GPU. "Device memory" is a memfd mapped twice: the
// address handed to loom is mapped PROT_NONE, so any direct access by loom crashes the test, and
// the fake driver copies through a second, readable view, as a real driver copies over PCIe.
// It also has one fake CUDA stream: a thread that runs "kernels" (test functions), event records
// and flag waits (cuStreamWaitValue32) in order, as a GPU runs a stream.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

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
    api_ = {&attr,         &copy,        &hostAlloc,   &freeHost,         &errorString,
            &setCtx,       &getCtx,      &eventCreate, &eventRecord,      &eventSync,
            &eventDestroy, &waitValue32, &streamSync,  &hostDevicePointer};
    cuda::setDriverForTesting(&api_);
    gpu_ = std::thread([this] { runStream(); });
  }
  ~FakeDevice() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
      cv_.notify_all();
    }
    gpu_.join();
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
  // The fake CUDA stream's handle, a kernel queued on it, and a wait for it to drain.
  void* stream() { return this; }
  void launch(std::function<void()> kernel) {
    push([k = std::move(kernel)] {
      k();
      return true;
    });
  }
  void synchronize() {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return queue_.empty() && !busy_; });
  }
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
  static int getCtx(void** ctx) {
    *ctx = current();
    return 0;
  }
  static int eventCreate(void** ev, unsigned) {
    *ev = new std::atomic<bool>(false);
    return 0;
  }
  static int eventRecord(void* ev, void* stream) {
    if (stream != current()) return 400;  // CUDA_ERROR_INVALID_HANDLE
    current()->push([ev] {
      static_cast<std::atomic<bool>*>(ev)->store(true);
      return true;
    });
    return 0;
  }
  static int eventSync(void* ev) {
    while (!static_cast<std::atomic<bool>*>(ev)->load())
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    return 0;
  }
  static int eventDestroy(void* ev) {
    delete static_cast<std::atomic<bool>*>(ev);
    return 0;
  }
  static int waitValue32(void* stream, uintptr_t addr, uint32_t value, unsigned) {
    if (stream != current()) return 400;
    current()->push([addr, value] {
      return __atomic_load_n(reinterpret_cast<uint32_t*>(addr), __ATOMIC_ACQUIRE) >= value;
    });
    return 0;
  }
  static int streamSync(void*) {
    current()->synchronize();
    return 0;
  }
  static int hostDevicePointer(uintptr_t* dptr, void* p, unsigned) {
    *dptr = reinterpret_cast<uintptr_t>(p);  // mapped host memory: same address on the fake GPU
    return 0;
  }

  // Each item runs until it returns true (a flag wait returns false until the flag is set).
  void push(std::function<bool()> item) {
    std::lock_guard<std::mutex> g(mu_);
    queue_.push_back(std::move(item));
    cv_.notify_all();
  }
  void runStream() {
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
      cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      auto item = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      lk.unlock();
      while (!item()) std::this_thread::sleep_for(std::chrono::microseconds(200));
      lk.lock();
      busy_ = false;
      cv_.notify_all();
    }
  }

  size_t bytes_;
  uint8_t* dev_ = nullptr;
  uint8_t* view_ = nullptr;
  bool managed_ = false;
  std::atomic<int> copies_{0};
  cuda::DriverApi api_{};
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<bool()>> queue_;
  bool busy_ = false, stop_ = false;
  std::thread gpu_;
};

}  // namespace loom::testing
