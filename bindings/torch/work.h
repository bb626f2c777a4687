// The Work a loom process group returns: completed on the group's loom stream by a host callback
// that runs after the operation (loomStreamLaunchHostFunc). It finishes the Work, copies staged
// results back into the caller's tensors first, and completes the future DDP comm hooks chain on.
#pragma once

#include <ATen/core/ivalue.h>

#include <functional>
#include <string>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <vector>

#include "loom/loom.h"

namespace loom::torch_backend {

class LoomWork : public c10d::Work {
 public:
  // outputs: what result() and the future return; post: runs on success before completion
  // (copies staged results out); keep: tensors that must live until the operation is done.
  LoomWork(int rank, c10d::OpType type, const char* name, std::vector<at::Tensor> outputs,
           std::function<void()> post, std::vector<at::Tensor> keep);

  bool isCompleted() override;
  bool isSuccess() const override;
  // Blocks until done; rethrows loom's error as a RuntimeError; throws if `timeout` passes first.
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  void synchronize() override {}
  std::vector<at::Tensor> result() override { return outputs_; }
  // Made on first use (a plain synchronous call never pays for it); completed with the Work.
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

  // The stream's host callback: status of the operation and loom's message when it failed.
  void complete(loomResult_t status, const std::string& error);

  // Enqueues complete() on `stream` after the work queued so far; comm names the error source.
  static void launchCompletion(const c10::intrusive_ptr<LoomWork>& work, loomStream_t stream,
                               loomComm_t comm);

 private:
  const char* name_;
  std::vector<at::Tensor> outputs_;
  std::function<void()> post_;
  std::vector<at::Tensor> keep_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;  // guarded by mutex_
};

}  // namespace loom::torch_backend
