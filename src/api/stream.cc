#include "api/stream.h"

#include <chrono>
#include <set>

#include "api/comm.h"
#include "loom/loom.h"

namespace loom::api {
namespace {

std::mutex& mu() {
  static std::mutex m;
  return m;
}
std::set<const loomStream*>& live() {
  static std::set<const loomStream*> s;
  return s;
}

void workerLoop(loomStream* s) {
  std::unique_lock<std::mutex> lk(s->mu);
  for (;;) {
    s->cv.wait(lk, [&] { return s->stop || !s->queue.empty(); });
    if (s->queue.empty()) return;
    auto fn = std::move(s->queue.front());
    s->queue.pop_front();
    lk.unlock();
    Status st = fn();
    lk.lock();
    if (!st.ok() && s->firstError.ok()) s->firstError = st;
    if (--s->pending == 0) s->idle.notify_all();
  }
}

}  // namespace

void streamEnqueue(loomStream* s, std::function<Status()> fn) {
  std::lock_guard<std::mutex> g(s->mu);
  if (s->cuda) fn = s->cuda->wrap(std::move(fn));  // under the lock: wraps in queue order
  s->queue.push_back(std::move(fn));
  ++s->pending;
  s->cv.notify_one();
}

bool isLiveStream(const loomStream* s) {
  std::lock_guard<std::mutex> g(mu());
  return live().count(s) == 1;
}

}  // namespace loom::api

using loom::api::isLiveStream;

namespace {
loomResult_t createStream(loomStream_t* stream, std::unique_ptr<loom::api::CudaOrder> cuda) {
  auto* s = new loomStream();
  s->cuda = std::move(cuda);
  s->worker = std::thread(loom::api::workerLoop, s);
  {
    std::lock_guard<std::mutex> g(loom::api::mu());
    loom::api::live().insert(s);
  }
  *stream = s;
  return loomSuccess;
}
}  // namespace

extern "C" loomResult_t loomStreamCreate(loomStream_t* stream) {
  if (stream == nullptr)
    return loom::api::fail(nullptr, loom::invalidArgument("stream (output pointer) is NULL"));
  return createStream(stream, nullptr);
}

extern "C" loomResult_t loomStreamCreateForCuda(loomStream_t* stream, void* cudaStream) {
  if (stream == nullptr)
    return loom::api::fail(nullptr, loom::invalidArgument("stream (output pointer) is NULL"));
  std::unique_ptr<loom::api::CudaOrder> order;
  loom::Status st = loom::api::CudaOrder::create(cudaStream, &order);
  if (!st.ok()) return loom::api::fail(nullptr, st);
  return createStream(stream, std::move(order));
}

extern "C" loomResult_t loomStreamQuery(loomStream_t s) {
  if (!isLiveStream(s))
    return loom::api::fail(nullptr, loom::invalidArgument("stream is not a live loomStream_t"));
  std::lock_guard<std::mutex> g(s->mu);
  if (!s->firstError.ok()) return loom::api::fail(nullptr, s->firstError);
  return s->pending > 0 ? loomInProgress : loomSuccess;
}

extern "C" loomResult_t loomStreamSynchronize(loomStream_t s, int64_t timeoutMs) {
  if (!isLiveStream(s))
    return loom::api::fail(nullptr, loom::invalidArgument("stream is not a live loomStream_t"));
  std::unique_lock<std::mutex> lk(s->mu);
  auto doneFn = [&] { return s->pending == 0; };
  if (timeoutMs < 0) {
    s->idle.wait(lk, doneFn);
  } else if (!s->idle.wait_for(lk, std::chrono::milliseconds(timeoutMs), doneFn)) {
    return loom::api::fail(
        nullptr, loom::timeoutError("loomStreamSynchronize: ", s->pending,
                                    " operations still pending after ", timeoutMs, " ms"));
  }
  if (!s->firstError.ok()) return loom::api::fail(nullptr, s->firstError);
  return loomSuccess;
}

extern "C" loomResult_t loomStreamDestroy(loomStream_t s) {
  {
    std::lock_guard<std::mutex> g(loom::api::mu());
    if (loom::api::live().erase(s) != 1)
      return loom::api::fail(nullptr, loom::invalidArgument("stream is not a live loomStream_t"));
  }
  {
    std::lock_guard<std::mutex> g(s->mu);
    s->stop = true;  // queued work still runs first
    s->cv.notify_all();
  }
  s->worker.join();
  delete s;
  return loomSuccess;
}

extern "C" loomResult_t loomStreamLaunchHostFunc(loomStream_t s, loomHostFn_t fn, void* userData) {
  if (!isLiveStream(s))
    return loom::api::fail(nullptr, loom::invalidArgument("stream is not a live loomStream_t"));
  if (fn == nullptr) return loom::api::fail(nullptr, loom::invalidArgument("fn is NULL"));
  loom::api::streamEnqueue(s, [s, fn, userData] {
    loomResult_t status;
    {
      std::lock_guard<std::mutex> g(s->mu);
      status = loom::api::toResult(s->firstError.code());
    }
    fn(userData, status);
    return loom::Status();
  });
  return loomSuccess;
}
