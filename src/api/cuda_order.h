// Ordering between a loom stream and a CUDA stream (loomStreamCreateForCuda), without blocking the
// thread that queues work. For each operation queued on the loom stream:
//  - before: an event is recorded on the CUDA stream; the loom stream's thread waits for it, so
//    the operation starts after the GPU work queued before it (kernels that produced the data);
//  - after: the CUDA stream gets a cuStreamWaitValue32 on a flag in mapped page-locked host memory
//    that the loom stream's thread sets to the operation's sequence number when it has run, so
//    GPU work queued later waits for the result on the GPU, not on the host.
// Costs per operation: one event record and one stream memory operation at enqueue, one event wait
// on loom's thread. An operation that fails still sets its flag, so the GPU never waits forever;
// the error is the loom stream's (loomStreamQuery / loomStreamSynchronize).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "core/status.h"

namespace loom::api {

class CudaOrder {
 public:
  // For the CUDA stream `stream` (a CUstream / cudaStream_t; nullptr is the legacy default
  // stream), in the CUDA context current on the calling thread.
  static Status create(void* stream, std::unique_ptr<CudaOrder>* out);
  ~CudaOrder();  // waits for the CUDA stream to pass its last flag wait, then frees the flag
  CudaOrder(const CudaOrder&) = delete;
  CudaOrder& operator=(const CudaOrder&) = delete;

  // Returns fn wrapped as described above. Calls must come in the loom stream's queue order.
  std::function<Status()> wrap(std::function<Status()> fn);

 private:
  CudaOrder() = default;
  void* stream_ = nullptr;
  void* ctx_ = nullptr;
  uint32_t* flag_ = nullptr;  // host address of the mapped flag
  uintptr_t flagDev_ = 0;     // the device address of the same word
  uint32_t seq_ = 0;
};

}  // namespace loom::api
