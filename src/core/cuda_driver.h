// The few CUDA driver calls loom's host code needs: what kind of memory a pointer is, copies in any
// direction (unified addressing), and page-locked host memory. They are opened at run time from
// libcuda.so.1, so loom detects and stages device memory without a CUDA toolkit at build time, and
// a machine without a driver simply has only host memory. Tests install a fake table.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace loom::cuda {

// The driver entry points used, with the driver's own signatures (CUresult is an int).
struct DriverApi {
  int (*pointerGetAttribute)(void* data, int attribute, uintptr_t ptr);
  int (*memcpy)(uintptr_t dst, uintptr_t src, size_t bytes);
  int (*memHostAlloc)(void** p, size_t bytes, unsigned flags);
  int (*memFreeHost)(void* p);
  int (*getErrorString)(int err, const char** str);
  int (*ctxSetCurrent)(void* ctx);
  // Ordering with CUDA streams (api/cuda_order.h).
  int (*ctxGetCurrent)(void** ctx);
  int (*eventCreate)(void** event, unsigned flags);
  int (*eventRecord)(void* event, void* stream);
  int (*eventSynchronize)(void* event);
  int (*eventDestroy)(void* event);
  int (*streamWaitValue32)(void* stream, uintptr_t addr, uint32_t value, unsigned flags);
  int (*streamSynchronize)(void* stream);
  int (*memHostGetDevicePointer)(uintptr_t* dptr, void* p, unsigned flags);
};

// The driver's constants loom uses (cuda.h values, stable across releases).
constexpr int kAttrContext = 1;     // CU_POINTER_ATTRIBUTE_CONTEXT
constexpr int kAttrMemoryType = 2;  // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
constexpr int kAttrIsManaged = 8;   // CU_POINTER_ATTRIBUTE_IS_MANAGED
constexpr int kMemoryTypeDevice = 2;
constexpr unsigned kHostAllocPortable = 1;   // CU_MEMHOSTALLOC_PORTABLE
constexpr unsigned kHostAllocDeviceMap = 2;  // CU_MEMHOSTALLOC_DEVICEMAP
constexpr unsigned kEventDisableTiming = 2;  // CU_EVENT_DISABLE_TIMING
constexpr unsigned kStreamWaitValueGeq = 0;  // CU_STREAM_WAIT_VALUE_GEQ

// The table, or nullptr when libcuda.so.1 cannot be opened (no driver: host memory only).
const DriverApi* driver();
// Replaces the table (nullptr: back to the real driver). For tests.
void setDriverForTesting(const DriverApi* api);

// True for memory only the GPU can address (cudaMalloc); host, pinned-host and managed memory,
// and every pointer when there is no driver or CUDA was never initialised, are host memory.
bool isDeviceMemory(const void* p);

// The CUDA context that owns device memory p (nullptr for host memory).
void* contextOf(const void* p);

// Makes ctx (from contextOf) current on the calling thread: loom's stream threads have none of
// their own. nullptr does nothing.
Status useContext(void* ctx);

// "what: <driver's text for err>" as a system error, or OK when err is 0.
Status check(int err, const char* what);

// Copies bytes between any two of host and device memory through the driver.
Status copy(void* dst, const void* src, size_t bytes);

// Page-locked host memory usable from every context when a driver is present (faster copies),
// malloc otherwise; *pinned says which, and must be handed back to freeHost.
void* allocHost(size_t bytes, bool* pinned);
void freeHost(void* p, bool pinned);

}  // namespace loom::cuda
