// loomStream_t: an in-order queue of host operations run by one library thread, optionally ordered
// with a CUDA stream (api/cuda_order.h).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <new>
#include <thread>

#include "api/cuda_order.h"
#include "core/status.h"

struct loomStream {
  std::mutex mu;
  std::condition_variable cv;    // work arrived / stop
  std::condition_variable idle;  // pending reached zero
  std::deque<std::function<loom::Status()>> queue;
  int pending = 0;
  loom::Status firstError;
  bool stop = false;
  std::thread worker;
  std::unique_ptr<loom::api::CudaOrder> cuda;  // loomStreamCreateForCuda
  // Never-reused memory (api/handles.h): a stale handle stays kInvalidUsage.
  static void* operator new(size_t bytes);
  static void* operator new(size_t bytes, const std::nothrow_t&) noexcept;
  static void operator delete(void* p) noexcept;
};

namespace loom::api {
// Queues fn; it runs after everything queued before it on this stream.
void streamEnqueue(loomStream* s, std::function<Status()> fn);
bool isLiveStream(const loomStream* s);
}  // namespace loom::api
