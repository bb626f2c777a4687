#include "tensors.h"

#include <c10/util/Exception.h>

namespace loom::torch_backend {

void checkTensor(const at::Tensor& t, const char* op, const char* what) {
  TORCH_CHECK(t.defined(), "loom ", op, ": ", what, " is undefined");
  TORCH_CHECK(!t.is_cuda(), "loom ", op, ": ", what, " is on ", t.device(),
              "; CUDA tensors are not supported yet by the loom backend (use CPU tensors)");
  TORCH_CHECK(t.device().is_cpu(), "loom ", op, ": ", what, " is on ", t.device(),
              "; the loom backend supports CPU tensors only");
  TORCH_CHECK(t.layout() == at::kStrided, "loom ", op, ": ", what,
              " is sparse; the loom backend supports dense tensors only");
}

void checkSame(const std::vector<at::Tensor>& ts, const at::Tensor& ref, const char* op,
               const char* what) {
  for (size_t i = 0; i < ts.size(); ++i) {
    checkTensor(ts[i], op, what);
    if (!ref.defined()) continue;
    TORCH_CHECK(ts[i].scalar_type() == ref.scalar_type(), "loom ", op, ": ", what, "[", i,
                "] has dtype ", ts[i].scalar_type(), " but the input has ", ref.scalar_type());
    TORCH_CHECK(ts[i].numel() == ref.numel(), "loom ", op, ": ", what, "[", i, "] has ",
                ts[i].numel(), " elements but the input has ", ref.numel());
  }
}

at::Tensor contiguous(const at::Tensor& t) { return t.is_contiguous() ? t : t.contiguous(); }

Buffer bytesOf(const at::Tensor& t) {
  Buffer b;
  b.tensor = t;
  b.data = t.data_ptr();
  b.count = t.numel() * t.element_size();
  b.dtype = loomUint8;
  return b;
}

namespace {

bool elementType(at::ScalarType s, loomDataType_t* out) {
  switch (s) {
    case at::kByte:
    case at::kBool:
      *out = loomUint8;
      return true;
    case at::kChar:
      *out = loomInt8;
      return true;
    case at::kInt:
      *out = loomInt32;
      return true;
    case at::kLong:
      *out = loomInt64;
      return true;
    case at::kHalf:
      *out = loomFloat16;
      return true;
    case at::kFloat:
    case at::kComplexFloat:
      *out = loomFloat32;
      return true;
    case at::kDouble:
    case at::kComplexDouble:
      *out = loomFloat64;
      return true;
    case at::kBFloat16:
      *out = loomBfloat16;
      return true;
    default:
      return false;
  }
}

const char* opLabel(c10d::ReduceOp::RedOpType op) {
  switch (op) {
    case c10d::ReduceOp::SUM:
      return "SUM";
    case c10d::ReduceOp::AVG:
      return "AVG";
    case c10d::ReduceOp::PRODUCT:
      return "PRODUCT";
    case c10d::ReduceOp::MIN:
      return "MIN";
    case c10d::ReduceOp::MAX:
      return "MAX";
    case c10d::ReduceOp::BAND:
      return "BAND";
    case c10d::ReduceOp::BOR:
      return "BOR";
    case c10d::ReduceOp::BXOR:
      return "BXOR";
    case c10d::ReduceOp::PREMUL_SUM:
      return "PREMUL_SUM";
    default:
      return "UNUSED";
  }
}

}  // namespace

Buffer elementsOf(const at::Tensor& t, const c10d::ReduceOp& op, const char* opName,
                  loomRedOp_t* lop) {
  const auto k = op.op_;
  const at::ScalarType s = t.scalar_type();
  Buffer b;
  b.tensor = t;
  b.data = t.data_ptr();
  b.count = t.numel();
  TORCH_CHECK(elementType(s, &b.dtype), "loom ", opName, ": dtype ", s,
              " cannot be reduced by loom (supported: uint8, int8, int32, int64, float16, "
              "bfloat16, float32, float64, complex64/128 for SUM and AVG, bool)");
  switch (k) {
    case c10d::ReduceOp::SUM:
      *lop = loomSum;
      break;
    case c10d::ReduceOp::AVG:
      *lop = loomAvg;
      break;
    case c10d::ReduceOp::PRODUCT:
      *lop = loomProd;
      break;
    case c10d::ReduceOp::MIN:
      *lop = loomMin;
      break;
    case c10d::ReduceOp::MAX:
      *lop = loomMax;
      break;
    default:
      TORCH_CHECK(false, "loom ", opName, ": ReduceOp.", opLabel(k),
                  " is not supported by the loom backend (supported: SUM, AVG, PRODUCT, MIN, MAX)");
  }
  if (s == at::kBool) {
    TORCH_CHECK(k != c10d::ReduceOp::AVG, "loom ", opName, ": ReduceOp.AVG of a bool tensor");
    if (*lop == loomSum) *lop = loomMax;   // logical or
    if (*lop == loomProd) *lop = loomMin;  // logical and
  }
  if (at::isComplexType(s)) {
    TORCH_CHECK(*lop == loomSum || *lop == loomAvg, "loom ", opName, ": ReduceOp.", opLabel(k),
                " is not defined for complex tensors (only SUM and AVG)");
    b.count *= 2;
  }
  return b;
}

void checkLoom(loomResult_t r, loomComm_t comm, const char* what) {
  if (r == loomSuccess) return;
  TORCH_CHECK(false, "loom ", what, " failed: ", loomGetErrorString(r), ": ",
              loomGetLastError(comm));
}

at::Tensor flatLike(const at::Tensor& like, int64_t n) {
  return at::empty({n * like.numel()}, like.options().memory_format(at::MemoryFormat::Contiguous));
}

}  // namespace loom::torch_backend
