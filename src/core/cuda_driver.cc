// Run-time binding to the CUDA driver (see cuda_driver.h).
#include "core/cuda_driver.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>

namespace loom::cuda {

namespace {

const DriverApi* openDriver() {
  static DriverApi api;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return nullptr;
  auto sym = [lib](const char* name) { return dlsym(lib, name); };
  api.pointerGetAttribute =
      reinterpret_cast<decltype(api.pointerGetAttribute)>(sym("cuPointerGetAttribute"));
  api.memcpy = reinterpret_cast<decltype(api.memcpy)>(sym("cuMemcpy"));
  api.memHostAlloc = reinterpret_cast<decltype(api.memHostAlloc)>(sym("cuMemHostAlloc"));
  api.memFreeHost = reinterpret_cast<decltype(api.memFreeHost)>(sym("cuMemFreeHost"));
  api.getErrorString = reinterpret_cast<decltype(api.getErrorString)>(sym("cuGetErrorString"));
  api.ctxSetCurrent = reinterpret_cast<decltype(api.ctxSetCurrent)>(sym("cuCtxSetCurrent"));
  api.ctxGetCurrent = reinterpret_cast<decltype(api.ctxGetCurrent)>(sym("cuCtxGetCurrent"));
  api.eventCreate = reinterpret_cast<decltype(api.eventCreate)>(sym("cuEventCreate"));
  api.eventRecord = reinterpret_cast<decltype(api.eventRecord)>(sym("cuEventRecord"));
  api.eventSynchronize =
      reinterpret_cast<decltype(api.eventSynchronize)>(sym("cuEventSynchronize"));
  api.eventDestroy = reinterpret_cast<decltype(api.eventDestroy)>(sym("cuEventDestroy_v2"));
  api.streamWaitValue32 =
      reinterpret_cast<decltype(api.streamWaitValue32)>(sym("cuStreamWaitValue32_v2"));
  api.streamSynchronize =
      reinterpret_cast<decltype(api.streamSynchronize)>(sym("cuStreamSynchronize"));
  api.memHostGetDevicePointer =
      reinterpret_cast<decltype(api.memHostGetDevicePointer)>(sym("cuMemHostGetDevicePointer_v2"));
  if (!api.pointerGetAttribute || !api.memcpy || !api.memHostAlloc || !api.memFreeHost ||
      !api.getErrorString || !api.ctxSetCurrent || !api.ctxGetCurrent || !api.eventCreate ||
      !api.eventRecord || !api.eventSynchronize || !api.eventDestroy || !api.streamWaitValue32 ||
      !api.streamSynchronize || !api.memHostGetDevicePointer)
    return nullptr;  // the library is kept open: its symbols are not used, nothing is leaked twice
  return &api;
}

std::atomic<const DriverApi*> gOverride{nullptr};
std::atomic<bool> gOverridden{false};

std::string errorText(const DriverApi* d, int err) {
  const char* s = nullptr;
  if (d->getErrorString(err, &s) != 0 || s == nullptr) return strCat("CUDA error ", err);
  return s;
}

}  // namespace

const DriverApi* driver() {
  if (gOverridden.load(std::memory_order_acquire)) return gOverride.load();
  static const DriverApi* real = openDriver();
  return real;
}

void setDriverForTesting(const DriverApi* api) {
  gOverride.store(api);
  gOverridden.store(api != nullptr, std::memory_order_release);
}

bool isDeviceMemory(const void* p) {
  const DriverApi* d = driver();
  if (d == nullptr || p == nullptr) return false;
  const auto addr = reinterpret_cast<uintptr_t>(p);
  unsigned int type = 0, managed = 0;
  // Fails with CUDA_ERROR_NOT_INITIALIZED when the process never used CUDA, and with
  // CUDA_ERROR_INVALID_VALUE for ordinary host memory: both mean host.
  if (d->pointerGetAttribute(&type, kAttrMemoryType, addr) != 0) return false;
  if (static_cast<int>(type) != kMemoryTypeDevice) return false;
  if (d->pointerGetAttribute(&managed, kAttrIsManaged, addr) == 0 && managed != 0) return false;
  return true;
}

void* contextOf(const void* p) {
  const DriverApi* d = driver();
  void* ctx = nullptr;
  if (d == nullptr || p == nullptr) return nullptr;
  if (d->pointerGetAttribute(&ctx, kAttrContext, reinterpret_cast<uintptr_t>(p)) != 0)
    return nullptr;
  return ctx;
}

Status check(int err, const char* what) {
  if (err == 0) return Status();
  const DriverApi* d = driver();
  return systemError(what, ": ", d ? errorText(d, err) : strCat("CUDA error ", err));
}

Status useContext(void* ctx) {
  const DriverApi* d = driver();
  if (d == nullptr || ctx == nullptr) return Status();
  int err = d->ctxSetCurrent(ctx);
  if (err != 0) return systemError("cuCtxSetCurrent: ", errorText(d, err));
  return Status();
}

Status copy(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return Status();
  const DriverApi* d = driver();
  if (d == nullptr) return internalError("device memory copy without a CUDA driver");
  int err = d->memcpy(reinterpret_cast<uintptr_t>(dst), reinterpret_cast<uintptr_t>(src), bytes);
  if (err != 0) return systemError("cuMemcpy of ", bytes, " bytes: ", errorText(d, err));
  return Status();
}

void* allocHost(size_t bytes, bool* pinned) {
  const DriverApi* d = driver();
  void* p = nullptr;
  *pinned = d != nullptr && d->memHostAlloc(&p, bytes, kHostAllocPortable) == 0;
  return *pinned ? p : std::malloc(bytes);
}

void freeHost(void* p, bool pinned) {
  if (p == nullptr) return;
  const DriverApi* d = driver();
  if (pinned && d != nullptr && d->memFreeHost(p) == 0) return;
  if (!pinned) std::free(p);
}

}  // namespace loom::cuda
