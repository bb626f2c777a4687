// The c10d operations of ProcessGroupLoom, each mapped to loom C API calls queued on the group's
// stream. Inputs that are not contiguous (and list arguments, which loom needs as one buffer) are
// staged in a contiguous tensor; results are copied back by the Work before it completes.
// Operations that only move data send bytes (any dtype); reductions map dtype and op (tensors.h).
#include <c10/util/Exception.h>

#include <cstring>
#include <numeric>

#include "process_group.h"
#include "tensors.h"

namespace loom::torch_backend {

using c10d::OpType;

namespace {

using Tensors = std::vector<at::Tensor>;

const at::Tensor& single(const Tensors& ts, const char* op, const char* what) {
  TORCH_CHECK(ts.size() == 1, "loom ", op, ": expected one ", what, " per process, got ", ts.size(),
              " (multi-device lists are not supported)");
  checkTensor(ts[0], op, what);
  return ts[0];
}

// Copies staged results back into the user's tensors (pairs whose buffer is a staged copy).
std::function<void()> copyBack(at::Tensor user, at::Tensor staged) {
  if (user.is_same(staged)) return nullptr;
  return [user, staged]() mutable { user.copy_(staged); };
}

// Packs tensors one after another into a byte tensor (any dtypes).
at::Tensor packBytes(const Tensors& ts) {
  int64_t total = 0;
  for (const auto& t : ts) total += t.numel() * t.element_size();
  at::Tensor flat = at::empty({total}, at::TensorOptions().dtype(at::kByte));
  auto* p = flat.data_ptr<uint8_t>();
  for (const auto& t : ts) {
    at::Tensor c = contiguous(t);
    const size_t n = c.numel() * c.element_size();
    if (n) std::memcpy(p, c.data_ptr(), n);
    p += n;
  }
  return flat;
}

// Unpacks bytes at `src` into tensors (the inverse of packBytes); returns the end pointer.
const uint8_t* unpackBytes(const uint8_t* src, Tensors& ts) {
  for (auto& t : ts) {
    if (t.numel() == 0) continue;
    at::Tensor view = at::from_blob(const_cast<uint8_t*>(src), t.sizes(), t.options());
    t.copy_(view);
    src += t.numel() * t.element_size();
  }
  return src;
}

}  // namespace

using WorkPtr = ProcessGroupLoom::WorkPtr;

WorkPtr ProcessGroupLoom::allreduce(Tensors& tensors, const c10d::AllreduceOptions& opts) {
  at::Tensor t = single(tensors, "allreduce", "tensor");
  at::Tensor c = contiguous(t);
  loomRedOp_t lop;
  Buffer b = elementsOf(c, opts.reduceOp, "allreduce", &lop);
  Op op{OpType::ALLREDUCE, "allreduce"};
  op.inlineBytes = c.nbytes();
  op.issue = [b, lop](loomComm_t comm, loomStream_t st) {
    return loomAllReduce(b.data, b.data, b.count, b.dtype, lop, comm, st);
  };
  op.outputs = tensors;
  op.post = copyBack(t, c);
  op.keep = {c};
  return enqueue(std::move(op));
}

WorkPtr ProcessGroupLoom::allreduce_coalesced(Tensors& tensors,
                                              const c10d::AllreduceCoalescedOptions& opts) {
  std::vector<Buffer> bufs;
  std::vector<loomRedOp_t> lops;
  std::vector<std::function<void()>> posts;
  Op op{OpType::ALLREDUCE_COALESCED, "allreduce_coalesced"};
  for (auto& t : tensors) {
    checkTensor(t, "allreduce_coalesced", "tensors");
    at::Tensor c = contiguous(t);
    loomRedOp_t lop;
    bufs.push_back(elementsOf(c, opts.reduceOp, "allreduce_coalesced", &lop));
    lops.push_back(lop);
    if (auto f = copyBack(t, c)) posts.push_back(f);
    op.keep.push_back(c);
  }
  op.inlineBytes = 0;
  for (const auto& t : op.keep) op.inlineBytes += t.nbytes();
  op.issue = [bufs, lops](loomComm_t comm, loomStream_t st) {
    loomResult_t first = loomGroupStart();
    for (size_t i = 0; i < bufs.size() && first == loomSuccess; ++i)
      first = loomAllReduce(bufs[i].data, bufs[i].data, bufs[i].count, bufs[i].dtype, lops[i], comm,
                            st);
    loomResult_t end = loomGroupEnd();
    return first != loomSuccess ? first : end;
  };
  op.outputs = tensors;
  if (!posts.empty())
    op.post = [posts] {
      for (auto& f : posts) f();
    };
  return enqueue(std::move(op));
}

WorkPtr ProcessGroupLoom::broadcast(Tensors& tensors, const c10d::BroadcastOptions& opts) {
  at::Tensor t = single(tensors, "broadcast", "tensor");
  checkRoot(opts.rootRank, "broadcast");
  TORCH_CHECK(opts.rootTensor == 0, "loom broadcast: rootTensor ", opts.rootTensor,
              " must be 0 (one tensor per process)");
  at::Tensor c = contiguous(t);
  Buffer b = bytesOf(c);
  const int root = opts.rootRank;
  Op op{OpType::BROADCAST, "broadcast"};
  op.inlineBytes = c.nbytes();
  op.issue = [b, root](loomComm_t comm, loomStream_t st) {
    return loomBroadcast(b.data, b.data, b.count, b.dtype, root, comm, st);
  };
  op.outputs = tensors;
  op.post = copyBack(t, c);
  op.keep = {c};
  return enqueue(std::move(op));
}

WorkPtr ProcessGroupLoom::reduce(Tensors& tensors, const c10d::ReduceOptions& opts) {
  at::Tensor t = single(tensors, "reduce", "tensor");
  checkRoot(opts.rootRank, "reduce");
  TORCH_CHECK(opts.rootTensor == 0, "loom reduce: rootTensor ", opts.rootTensor, " must be 0");
  at::Tensor c = contiguous(t);
  loomRedOp_t lop;
  Buffer b = elementsOf(c, opts.reduceOp, "reduce", &lop);
  const int root = opts.rootRank;
  const bool atRoot = root == rank_;
  Op op{OpType::REDUCE, "reduce"};
  op.inlineBytes = c.nbytes();
  op.issue = [b, lop, root, atRoot](loomComm_t comm, loomStream_t st) {
    // Other ranks' tensors stay as they were (their receive buffer is not used).
    return loomReduce(b.data, atRoot ? b.data : nullptr, b.count, b.dtype, lop, root, comm, st);
  };
  op.outputs = tensors;
  if (atRoot) op.post = copyBack(t, c);
  op.keep = {c};
  return enqueue(std::move(op));
}

WorkPtr ProcessGroupLoom::allgather(TensorLists& outputs, Tensors& inputs,
                                    const c10d::AllgatherOptions&) {
  at::Tensor in = single(inputs, "allgather", "input tensor");
  TORCH_CHECK(outputs.size() == 1, "loom allgather: expected one output list, got ",
              outputs.size());
  TORCH_CHECK(static_cast<int>(outputs[0].size()) == size_, "loom allgather: the output list has ",
              outputs[0].size(), " tensors but the group has ", size_, " ranks");
  checkSame(outputs[0], in, "allgather", "output_tensors");
  at::Tensor c = contiguous(in);
  at::Tensor flat = flatLike(in, size_);
  Buffer s = bytesOf(c), r = bytesOf(flat);
  Op op{OpType::ALLGATHER, "allgather"};
  op.inlineBytes = flat.nbytes();
  op.issue = [s, r](loomComm_t comm, loomStream_t st) {
    return loomAllGather(s.data, r.data, s.count, loomUint8, comm, st);
  };
  op.outputs = outputs[0];
  Tensors outs = outputs[0];
  op.post = [outs, flat]() mutable {
    const int64_t n = flat.numel() / static_cast<int64_t>(outs.size());
    for (size_t i = 0; i < outs.size(); ++i)
      outs[i].copy_(flat.narrow(0, i * n, n).view(outs[i].sizes()));
  };
  op.keep = {c};
  return enqueue(std::move(op));
}

WorkPtr ProcessGroupLoom::_allgather_base(at::Tensor& output, at::Tensor& input,
                                          const c10d::AllgatherOptions&) {
  checkTensor(input, "_allgather_base", "input_tensor");
  checkTensor(output, "_allgather_base", "output_tensor");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "loom _allgather_base: output dtype ",
              output.scalar_type(), " differs from input dtype ", input.scalar_type());
  TORCH_CHECK(output.numel() == input.numel() * size_, "loom _allgather_base: output_tensor has ",
              output.numel(), " elements, expected world size ", size_, " x ", input.numel());
  at::Tensor co = contiguous(output), ci = contiguous(input);
  Buffer s = bytesOf(ci), r = bytesOf(co);
  Op op{OpType::_ALLGATHER_BASE, "_allgather_base"};
  op.inlineBytes = co.nbytes();
  op.issue = [s, r](loomComm_t comm, loomStream_t st) {
    return loomAllGather(s.data, r.data, s.count, loomUint8, comm, st);
  };
  op.outputs = {output};
  op.post = copyBack(output, co);
  op.keep = {co, ci};
  return enqueue(std::move(op));
}

WorkPtr ProcessGroupLoom::allgather_coalesced(TensorLists& outputLists, Tensors& inputs,
                                              const c10d::AllgatherOptions&) {
  TORCH_CHECK(static_cast<int>(outputLists.size()) == size_,
              "loom allgather_coalesced: expected one output list per rank (", size_, "), got ",
              outputLists.size());
  for (const auto& t : inputs) checkTensor(t, "allgather_coalesced", "input_tensor_list");
  for (const auto& list : outputLists) {
    TORCH_CHECK(list.size() == inputs.size(), "loom allgather_coalesced: an output list has ",
                list.size(), " tensors but there are ", inputs.size(), " inputs");
    for (size_t j = 0; j < list.size(); ++j)
      checkSame({list[j]}, inputs[j], "allgather_coalesced", "output_tensor_lists");
  }
  at::Tensor send = packBytes(inputs);
  at::Tensor recv = at::empty({send.numel() * size_}, send.options());
  Buffer s = bytesOf(send), r = bytesOf(recv);
  Op op{OpType::ALLGATHER_COALESCED, "allgather_coalesced"};
  op.issue = [s, r](loomComm_t comm, loomStream_t st) {
    return loomAllGather(s.data, r.data, s.count, loomUint8, comm, st);
  };
  for (const auto& list : outputLists)
    op.outputs.insert(op.outputs.end(), list.begin(), list.end());
  op.post = [outputLists, recv]() mutable {
    const uint8_t* p = recv.data_ptr<uint8_t>();
    for (auto& list : outputLists) p = unpackBytes(p, list);
  };
  op.keep = {send};
  return enqueue(std::move(op));
}

WorkPtr ProcessGroupLoom::gather(TensorLists& outputs, Tensors& inputs,
                                 const c10d::GatherOptions& opts) {
  at::Tensor in = single(inputs, "gather", "tensor");
  checkRoot(opts.rootRank, "gather");
  const int root = opts.rootRank;
  const bool atRoot = root == rank_;
  at::Tensor flat;
  Tensors outs;
  if (atRoot) {
    TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == size_,
                "loom gather: the root needs one gather_list of ", size_, " tensors");
    checkSame(outputs[0], in, "gather", "gather_list");
    outs = outputs[0];
    flat = flatLike(in, size_);
  } else {
    TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()),
                "loom gather: gather_list must be empty on ranks other than the root");
  }
  at::Tensor c = contiguous(in);
  Buffer s = bytesOf(c);
  void* r = atRoot ? flat.data_ptr() : nullptr;
  Op op{OpType::GATHER, "gather"};
  op.issue = [s, r, root](loomComm_t comm, loomStream_t st) {
    return loomGather(s.data, r, s.count, loomUint8, root, comm, st);
  };
  op.outputs = outs;
  if (atRoot)
    op.post = [outs, flat]() mutable {
      const int64_t n = flat.numel() / static_cast<int64_t>(outs.size());
      for (size_t i = 0; i < outs.size(); ++i)
        outs[i].copy_(flat.narrow(0, i * n, n).view(outs[i].sizes()));
    };
  op.keep = {c};
  return enqueue(std::move(op));
}

WorkPtr ProcessGroupLoom::scatter(Tensors& outputs, TensorLists& inputs,
                                  const c10d::ScatterOptions& opts) {
  at::Tensor out = single(outputs, "scatter", "tensor");
  checkRoot(opts.rootRank, "scatter");
  const int root = opts.rootRank;
  const bool atRoot = root == rank_;
  at::Tensor flat;
  if (atRoot) {
    TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_,
                "loom scatter: the root needs one scatter_list of ", size_, " tensors");
    checkSame(inputs[0], out, "scatter", "scatter_list");
    flat = packBytes(inputs[0]);
  } else {
    TORCH_CHECK(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()),
                "loom scatter: scatter_list must be empty on ranks other than the root");
  }
  at::Tensor c = contiguous(out);
  Buffer r = bytesOf(c);
  const void* s = atRoot ? flat.data_ptr() : nullptr;
  Op op{OpType::SCATTER, "scatter"};
  op.issue = [s, r, root](loomComm_t comm, loomStream_t st) {
    return loomScatter(s, r.data, r.count, loomUint8, root, comm, st);
  };
  op.outputs = outputs;
  op.post = copyBack(out, c);
  op.keep = {c};
  if (atRoot) op.keep.push_back(flat);
  return enqueue(std::move(op));
}

WorkPtr ProcessGroupLoom::reduce_scatter(Tensors& outputs, TensorLists& inputs,
                                         const c10d::ReduceScatterOptions& opts) {
  at::Tensor out = single(outputs, "reduce_scatter", "output");
  TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_,
              "loom reduce_scatter: expected one input_list of ", size_, " tensors");
  checkSame(inputs[0], out, "reduce_scatter", "input_list");
  at::Tensor flat = packBytes(inputs[0]);
  at::Tensor c = contiguous(out);
  loomRedOp_t lop;
  Buffer r = elementsOf(c, opts.reduceOp, "reduce_scatter", &lop);
  const void* s = flat.data_ptr();
  Op op{OpType::REDUCE_SCATTER, "reduce_scatter"};
  op.inlineBytes = flat.nbytes();
  op.issue = [s, r, lop](loomComm_t comm, loomStream_t st) {
    return loomReduceScatter(s, r.data, r.count, r.dtype, lop, comm, st);
  };
  op.outputs = outputs;
  op.post = copyBack(out, c);
  op.keep = {c, flat};
  return enqueue(std::move(op));
}

WorkPtr ProcessGroupLoom::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                               const c10d::ReduceScatterOptions& opts) {
  checkTensor(input, "_reduce_scatter_base", "input");
  checkTensor(output, "_reduce_scatter_base", "output");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(),
              "loom _reduce_scatter_base: output dtype ", output.scalar_type(),
              " differs from input dtype ", input.scalar_type());
  TORCH_CHECK(input.numel() == output.numel() * size_, "loom _reduce_scatter_base: input has ",
              input.numel(), " elements, expected world size ", size_, " x ", output.numel());
  at::Tensor co = contiguous(output), ci = contiguous(input);
  loomRedOp_t lop;
  Buffer r = elementsOf(co, opts.reduceOp, "_reduce_scatter_base", &lop);
  const void* s = ci.data_ptr();
  Op op{OpType::_REDUCE_SCATTER_BASE, "_reduce_scatter_base"};
  op.inlineBytes = ci.nbytes();
  op.issue = [s, r, lop](loomComm_t comm, loomStream_t st) {
    return loomReduceScatter(s, r.data, r.count, r.dtype, lop, comm, st);
  };
  op.outputs = {output};
  op.post = copyBack(output, co);
  op.keep = {co, ci};
  return enqueue(std::move(op));
}

WorkPtr ProcessGroupLoom::barrier(const c10d::BarrierOptions&) {
  Op op{OpType::BARRIER, "barrier"};
  op.inlineBytes = 0;
  op.issue = [](loomComm_t comm, loomStream_t st) { return loomBarrier(comm, st); };
  return enqueue(std::move(op));
}

WorkPtr ProcessGroupLoom::send(Tensors& tensors, int dstRank, int /*tag*/) {
  at::Tensor t = single(tensors, "send", "tensor");
  checkPeer(dstRank, "send");
  at::Tensor c = contiguous(t);
  Buffer b = bytesOf(c);
  Op op{OpType::SEND, "send"};
  op.issue = [b, dstRank](loomComm_t comm, loomStream_t st) {
    return loomSend(b.data, b.count, loomUint8, dstRank, comm, st);
  };
  op.outputs = tensors;
  op.keep = {c};
  return enqueue(std::move(op));
}

WorkPtr ProcessGroupLoom::recv(Tensors& tensors, int srcRank, int /*tag*/) {
  at::Tensor t = single(tensors, "recv", "tensor");
  checkPeer(srcRank, "recv");
  at::Tensor c = contiguous(t);
  Buffer b = bytesOf(c);
  Op op{OpType::RECV, "recv"};
  op.issue = [b, srcRank](loomComm_t comm, loomStream_t st) {
    return loomRecv(b.data, b.count, loomUint8, srcRank, comm, st);
  };
  op.outputs = tensors;
  op.post = copyBack(t, c);
  op.keep = {c};
  return enqueue(std::move(op));
}

WorkPtr ProcessGroupLoom::recvAnysource(Tensors&, int) {
  TORCH_CHECK(false,
              "loom recv: receiving from any source (src=None) is not supported; name the sender");
}

}  // namespace loom::torch_backend
