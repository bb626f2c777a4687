// Tensor checks and the mapping from torch dtypes and reduce ops to loom's, shared by every
// collective of the PyTorch backend. Errors are c10::Error (RuntimeError in Python) naming the
// argument.
#pragma once

#include <ATen/ATen.h>

#include <torch/csrc/distributed/c10d/Types.hpp>
#include <vector>

#include "loom/loom.h"

namespace loom::torch_backend {

// A tensor's data as loom sees it: pointer, element count and loom datatype.
struct Buffer {
  at::Tensor tensor;  // contiguous (the argument itself, or a staged copy)
  void* data = nullptr;
  size_t count = 0;
  loomDataType_t dtype = loomUint8;
};

// Throws unless t is a dense CPU tensor; `what` names the argument ("tensor", "output_tensor",
// ...).
void checkTensor(const at::Tensor& t, const char* op, const char* what);
// Checks every tensor of a list and that they share dtype and shape with ref (when given).
void checkSame(const std::vector<at::Tensor>& ts, const at::Tensor& ref, const char* op,
               const char* what);

// t itself when contiguous, else a contiguous copy (results are copied back by the caller).
at::Tensor contiguous(const at::Tensor& t);

// Bytes view for operations that only move data (any dtype): count = nbytes, dtype = uint8.
Buffer bytesOf(const at::Tensor& contiguousTensor);
// Element view for reductions with `op`; sets *lop. Complex SUM/AVG reduce as pairs of reals,
// bool reduces as uint8 (SUM -> MAX and PRODUCT -> MIN, as logical or / and).
Buffer elementsOf(const at::Tensor& contiguousTensor, const c10d::ReduceOp& op, const char* opName,
                  loomRedOp_t* lop);

// Throws with the last loom error message unless r is loomSuccess.
void checkLoom(loomResult_t r, loomComm_t comm, const char* what);

// A flat contiguous tensor holding `n` tensors like `like`, one after another.
at::Tensor flatLike(const at::Tensor& like, int64_t n);

}  // namespace loom::torch_backend
