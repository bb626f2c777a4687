// Ordering between a loom stream and a CUDA stream (see cuda_order.h).
#include "api/cuda_order.h"

#include "core/cuda_driver.h"

namespace loom::api {

Status CudaOrder::create(void* stream, std::unique_ptr<CudaOrder>* out) {
  const cuda::DriverApi* d = cuda::driver();
  if (d == nullptr) return invalidUsage("no CUDA driver (libcuda.so.1) in this process");
  std::unique_ptr<CudaOrder> o(new CudaOrder);
  o->stream_ = stream;
  LOOM_CHECK(cuda::check(d->ctxGetCurrent(&o->ctx_), "cuCtxGetCurrent"));
  if (o->ctx_ == nullptr)
    return invalidUsage(
        "no current CUDA context on this thread (use the CUDA stream's device first)");
  void* p = nullptr;
  LOOM_CHECK(cuda::check(
      d->memHostAlloc(&p, sizeof(uint32_t), cuda::kHostAllocPortable | cuda::kHostAllocDeviceMap),
      "cuMemHostAlloc (stream flag)"));
  o->flag_ = static_cast<uint32_t*>(p);
  *o->flag_ = 0;
  LOOM_CHECK(cuda::check(d->memHostGetDevicePointer(&o->flagDev_, p, 0),
                         "cuMemHostGetDevicePointer (stream flag)"));
  *out = std::move(o);
  return Status();
}

CudaOrder::~CudaOrder() {
  const cuda::DriverApi* d = cuda::driver();
  if (d == nullptr || flag_ == nullptr) return;
  // The GPU may not have reached the last wait on the flag yet; freeing it first would leave the
  // wait reading freed memory.
  if (cuda::useContext(ctx_).ok()) (void)d->streamSynchronize(stream_);
  (void)d->memFreeHost(flag_);
}

std::function<Status()> CudaOrder::wrap(std::function<Status()> fn) {
  const cuda::DriverApi* d = cuda::driver();
  const uint32_t seq = ++seq_;
  void* event = nullptr;
  Status before = cuda::useContext(ctx_);
  if (before.ok())
    before = cuda::check(d->eventCreate(&event, cuda::kEventDisableTiming), "cuEventCreate");
  if (before.ok()) before = cuda::check(d->eventRecord(event, stream_), "cuEventRecord");
  Status after =
      cuda::check(d->streamWaitValue32(stream_, flagDev_, seq, cuda::kStreamWaitValueGeq),
                  "cuStreamWaitValue32");
  return [d, fn = std::move(fn), before, after, event, seq, ctx = ctx_, flag = flag_]() {
    Status st = before;
    if (st.ok()) st = cuda::useContext(ctx);
    if (st.ok()) st = cuda::check(d->eventSynchronize(event), "cuEventSynchronize");
    if (st.ok()) st = fn();
    __atomic_store_n(flag, seq, __ATOMIC_RELEASE);  // also after a failure: the GPU must go on
    if (event != nullptr) (void)d->eventDestroy(event);
    return st.ok() ? after : st;
  };
}

}  // namespace loom::api
