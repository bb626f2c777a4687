// ProcessGroupLoom: a c10d ProcessGroup (torch 1.13; a c10d::Backend on 2.x, compat.h) over loom's
// public C API. One loom communicator and one
// loom stream per group; every operation is checked and queued on the stream at once and returns
// a LoomWork that the stream completes (see work.h). No algorithm choice here: loom plans.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "compat.h"
#include "loom/loom.h"
#include "work.h"

namespace loom::torch_backend {

class ProcessGroupLoom : public TorchBase {
 public:
  // Bootstrap through the c10d store: rank 0 makes loom's unique id and sets it under
  // "loom_unique_id"; the others get it (the store is the group's own PrefixStore).
  ProcessGroupLoom(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                   std::chrono::milliseconds timeout);
  ~ProcessGroupLoom() override;

  const std::string getBackendName() const override { return "loom"; }
  // Waits for queued work (a short grace), aborts the communicator if it does not finish, and
  // frees it; later calls raise. Also run by the destructor.
  void shutdown();

  using Tensors = std::vector<at::Tensor>;
  using TensorLists = std::vector<std::vector<at::Tensor>>;
  using WorkPtr = c10::intrusive_ptr<c10d::Work>;

  WorkPtr broadcast(Tensors& tensors, const c10d::BroadcastOptions& opts) override;
  WorkPtr allreduce(Tensors& tensors, const c10d::AllreduceOptions& opts) override;
  WorkPtr allreduce_coalesced(Tensors& tensors,
                              const c10d::AllreduceCoalescedOptions& opts) override;
  WorkPtr reduce(Tensors& tensors, const c10d::ReduceOptions& opts) override;
  WorkPtr allgather(TensorLists& outputs, Tensors& inputs,
                    const c10d::AllgatherOptions& opts) override;
  WorkPtr _allgather_base(at::Tensor& output, at::Tensor& input,
                          const c10d::AllgatherOptions& opts) override;
  WorkPtr allgather_coalesced(TensorLists& outputLists, Tensors& inputs,
                              const c10d::AllgatherOptions& opts) override;
  WorkPtr gather(TensorLists& outputs, Tensors& inputs, const c10d::GatherOptions& opts) override;
  WorkPtr scatter(Tensors& outputs, TensorLists& inputs, const c10d::ScatterOptions& opts) override;
  WorkPtr reduce_scatter(Tensors& outputs, TensorLists& inputs,
                         const c10d::ReduceScatterOptions& opts) override;
  WorkPtr _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                               const c10d::ReduceScatterOptions& opts) override;
  WorkPtr alltoall_base(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& outputSplits,
                        std::vector<int64_t>& inputSplits,
                        const c10d::AllToAllOptions& opts) override;
  WorkPtr alltoall(Tensors& outputs, Tensors& inputs, const c10d::AllToAllOptions& opts) override;
  WorkPtr send(Tensors& tensors, int dstRank, int tag) override;
  WorkPtr recv(Tensors& tensors, int srcRank, int tag) override;
  WorkPtr recvAnysource(Tensors& tensors, int tag) override;
  WorkPtr barrier(const c10d::BarrierOptions& opts) override;

  void setSequenceNumberForGroup() override { seq_ = 0; }
  uint64_t getSequenceNumberForGroup() override { return seq_; }

  loomComm_t comm() const { return comm_; }

 private:
  struct Op {
    Op(c10d::OpType t, const char* n) : type(t), name(n) {}
    c10d::OpType type;
    const char* name;
    std::function<loomResult_t(loomComm_t, loomStream_t)> issue;  // loom call(s) on the stream
    Tensors outputs;             // Work::result() and the future's value
    std::function<void()> post;  // copies staged results out (on success)
    Tensors keep;                // staging and inputs kept alive until done
    // Collectives of at most LOOM_TORCH_INLINE_BYTES issued while the stream is idle run on the
    // calling thread (no thread hand-off); SIZE_MAX: always on the stream (point-to-point).
    size_t inlineBytes = SIZE_MAX;
  };
  // Queues op.issue and the completion on the stream; returns the Work at once.
  WorkPtr enqueue(Op op);
  void checkRoot(int root, const char* op) const;
  void checkPeer(int peer, const char* op) const;

  loomComm_t comm_ = nullptr;
  loomStream_t stream_ = nullptr;
  std::chrono::milliseconds timeout_;
  std::mutex mu_;  // one issuer at a time (loom groups are per thread; the stream is ordered)
  std::atomic<uint64_t> seq_{0};
  size_t inlineLimit_ = 0;  // LOOM_TORCH_INLINE_BYTES
};

}  // namespace loom::torch_backend
