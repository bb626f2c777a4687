#include "work.h"

#include <ATen/core/jit_type.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <memory>
#include <stdexcept>

namespace loom::torch_backend {

LoomWork::LoomWork(int rank, c10d::OpType type, const char* name, std::vector<at::Tensor> outputs,
                   std::function<void()> post, std::vector<at::Tensor> keep)
    : c10d::Work(rank, type),
      name_(name),
      outputs_(std::move(outputs)),
      post_(std::move(post)),
      keep_(std::move(keep)) {}

namespace {

c10::intrusive_ptr<c10::ivalue::Future> newFuture() {
  static const c10::TypePtr kTensorList = c10::ListType::create(c10::TensorType::get());
  return c10::make_intrusive<c10::ivalue::Future>(kTensorList);
}

}  // namespace

c10::intrusive_ptr<c10::ivalue::Future> LoomWork::getFuture() {
  std::lock_guard<std::mutex> g(mutex_);
  if (future_) return future_;
  future_ = newFuture();
  if (completed_) {  // already done: nothing can be chained on it yet, complete it here
    if (exception_)
      future_->setError(exception_);
    else
      future_->markCompleted(c10::IValue(outputs_));
  }
  return future_;
}

bool LoomWork::isCompleted() {
  std::lock_guard<std::mutex> g(mutex_);
  return completed_;
}

bool LoomWork::isSuccess() const {
  std::lock_guard<std::mutex> g(mutex_);
  return completed_ && !exception_;
}

bool LoomWork::wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lk(mutex_);
  if (timeout == kNoTimeout) {
    cv_.wait(lk, [&] { return completed_; });
  } else if (!cv_.wait_for(lk, timeout, [&] { return completed_; })) {
    throw std::runtime_error(std::string("loom ") + name_ + ": not complete after " +
                             std::to_string(timeout.count()) + " ms (wait timeout)");
  }
  if (exception_) std::rethrow_exception(exception_);
  return true;
}

void LoomWork::complete(loomResult_t status, const std::string& error) {
  std::exception_ptr err;
  if (status == loomSuccess && post_) {
    try {
      torch::autograd::AutoGradMode noGrad(false);  // copying back into leaves that need grad
      post_();
    } catch (...) {
      err = std::current_exception();
    }
  } else if (status != loomSuccess) {
    err = std::make_exception_ptr(std::runtime_error(
        std::string("loom ") + name_ + " failed: " + loomGetErrorString(status) + ": " + error));
  }
  post_ = nullptr;
  keep_.clear();
  c10::intrusive_ptr<c10::ivalue::Future> fut;
  {
    std::lock_guard<std::mutex> g(mutex_);
    completed_ = true;
    exception_ = err;
    fut = future_;  // null unless getFuture() came first; then getFuture() completes its own
  }
  cv_.notify_all();
  if (!fut) return;
  // Future callbacks (DDP comm hooks) run here, on the stream thread, after the Work is done.
  if (err)
    fut->setError(err);
  else
    fut->markCompleted(c10::IValue(outputs_));
}

namespace {

struct Pending {
  c10::intrusive_ptr<LoomWork> work;
  loomComm_t comm;
};

void onDone(void* user, loomResult_t status) {
  std::unique_ptr<Pending> p(static_cast<Pending*>(user));
  std::string error;
  if (status != loomSuccess) error = loomGetLastError(p->comm);
  p->work->complete(status, error);
}

}  // namespace

void LoomWork::launchCompletion(const c10::intrusive_ptr<LoomWork>& work, loomStream_t stream,
                                loomComm_t comm) {
  auto p = std::make_unique<Pending>(Pending{work, comm});
  loomResult_t r = loomStreamLaunchHostFunc(stream, onDone, p.get());
  TORCH_CHECK(r == loomSuccess, "loom: cannot queue the completion of ", work->name_, ": ",
              loomGetLastError(nullptr));
  p.release();
}

}  // namespace loom::torch_backend
