// All-to-all for ProcessGroupLoom: alltoall_base (all_to_all_single) with even or uneven split
// sizes along dim 0, and the list form alltoall. Both move bytes: even splits use loomAllToAll,
// uneven ones (and lists) loomAllToAllv with byte counts and displacements.
#include <c10/util/Exception.h>

#include <cstring>

#include "process_group.h"
#include "tensors.h"

namespace loom::torch_backend {

using c10d::OpType;

namespace {

// Byte counts and displacements of `splits` rows of `rowBytes` (even split when empty).
void splitBytes(const std::vector<int64_t>& splits, const at::Tensor& t, int p, const char* what,
                std::vector<size_t>* counts, std::vector<size_t>* displs) {
  const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
  const size_t rowBytes = rows == 0 ? 0 : t.numel() / rows * t.element_size();
  std::vector<int64_t> s = splits;
  if (s.empty()) {
    TORCH_CHECK(rows % p == 0, "loom alltoall_base: ", what, " has ", rows,
                " rows, not divisible by the world size ", p, " (give split sizes)");
    s.assign(p, rows / p);
  }
  TORCH_CHECK(static_cast<int>(s.size()) == p, "loom alltoall_base: ", what, " split sizes have ",
              s.size(), " entries, expected the world size ", p);
  int64_t sum = 0;
  counts->resize(p);
  displs->resize(p);
  for (int i = 0; i < p; ++i) {
    TORCH_CHECK(s[i] >= 0, "loom alltoall_base: ", what, " split size ", i, " is negative");
    (*displs)[i] = sum * rowBytes;
    (*counts)[i] = s[i] * rowBytes;
    sum += s[i];
  }
  TORCH_CHECK(sum == rows, "loom alltoall_base: ", what, " split sizes add up to ", sum,
              " but the tensor has ", rows, " rows");
}

}  // namespace

ProcessGroupLoom::WorkPtr ProcessGroupLoom::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                          std::vector<int64_t>& outputSplits,
                                                          std::vector<int64_t>& inputSplits,
                                                          const c10d::AllToAllOptions&) {
  checkTensor(input, "alltoall_base", "input");
  checkTensor(output, "alltoall_base", "output");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "loom alltoall_base: output dtype ",
              output.scalar_type(), " differs from input dtype ", input.scalar_type());
  std::vector<size_t> sc, sd, rc, rd;
  splitBytes(inputSplits, input, size_, "input", &sc, &sd);
  splitBytes(outputSplits, output, size_, "output", &rc, &rd);
  at::Tensor co = contiguous(output);
  // loom's all-to-all is never in place: an input sharing memory with the output is copied.
  at::Tensor ci =
      input.is_alias_of(co) ? input.clone(at::MemoryFormat::Contiguous) : contiguous(input);
  const void* s = ci.data_ptr();
  void* r = co.data_ptr();
  const bool even = inputSplits.empty() && outputSplits.empty();
  TORCH_CHECK(!even || output.numel() == input.numel(), "loom alltoall_base: output has ",
              output.numel(), " elements but input has ", input.numel(),
              " (even splits need equal sizes)");
  Op op{OpType::ALLTOALL_BASE, "alltoall_base"};
  op.issue = [=](loomComm_t comm, loomStream_t st) {
    if (even) return loomAllToAll(s, r, sc[0], loomUint8, comm, st);
    return loomAllToAllv(s, sc.data(), sd.data(), r, rc.data(), rd.data(), loomUint8, comm, st);
  };
  op.outputs = {output};
  if (!output.is_same(co)) op.post = [output, co]() mutable { output.copy_(co); };
  op.keep = {co, ci};
  return enqueue(std::move(op));
}

ProcessGroupLoom::WorkPtr ProcessGroupLoom::alltoall(Tensors& outputs, Tensors& inputs,
                                                     const c10d::AllToAllOptions&) {
  TORCH_CHECK(static_cast<int>(inputs.size()) == size_ && static_cast<int>(outputs.size()) == size_,
              "loom alltoall: expected ", size_, " input and output tensors, got ", inputs.size(),
              " and ", outputs.size());
  std::vector<size_t> sc(size_), sd(size_), rc(size_), rd(size_);
  size_t sOff = 0, rOff = 0;
  for (int i = 0; i < size_; ++i) {
    checkTensor(inputs[i], "alltoall", "input_tensor_list");
    checkTensor(outputs[i], "alltoall", "output_tensor_list");
    TORCH_CHECK(inputs[i].scalar_type() == inputs[0].scalar_type() &&
                    outputs[i].scalar_type() == inputs[0].scalar_type(),
                "loom alltoall: all tensors must have one dtype (", inputs[0].scalar_type(), ")");
    sc[i] = inputs[i].numel() * inputs[i].element_size();
    sd[i] = sOff;
    sOff += sc[i];
    rc[i] = outputs[i].numel() * outputs[i].element_size();
    rd[i] = rOff;
    rOff += rc[i];
  }
  at::Tensor send = at::empty({static_cast<int64_t>(sOff)}, at::TensorOptions().dtype(at::kByte));
  at::Tensor recv = at::empty({static_cast<int64_t>(rOff)}, send.options());
  for (int i = 0; i < size_; ++i) {
    at::Tensor c = contiguous(inputs[i]);
    if (sc[i]) std::memcpy(send.data_ptr<uint8_t>() + sd[i], c.data_ptr(), sc[i]);
  }
  const void* s = send.data_ptr();
  void* r = recv.data_ptr();
  Op op{OpType::ALLTOALL, "alltoall"};
  op.issue = [=](loomComm_t comm, loomStream_t st) {
    return loomAllToAllv(s, sc.data(), sd.data(), r, rc.data(), rd.data(), loomUint8, comm, st);
  };
  op.outputs = outputs;
  op.post = [outputs, recv, rd]() mutable {
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i].numel() == 0) continue;
      outputs[i].copy_(at::from_blob(recv.data_ptr<uint8_t>() + rd[i], outputs[i].sizes(),
                                     outputs[i].options()));
    }
  };
  op.keep = {send};
  return enqueue(std::move(op));
}

}  // namespace loom::torch_backend
