// GPU reduction kernels (interface and semantics: reduce_cuda.h). One grid-stride kernel maps an
// element function over the buffer; when dst, a and b are 16-byte aligned each thread moves
// 16 bytes per load and store, the width that reaches HBM bandwidth on A100/H100. The element
// functions come from ops_inl.h, the same code the CPU kernels and their tests run.
#include <cuda_runtime.h>

#include "kernels/ops_inl.h"
#include "kernels/reduce_cuda.h"

namespace loom::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr size_t kMaxBlocks = 8192;

template <typename T, class Op>
struct PlainFn {
  __device__ T operator()(T x, T y) const { return static_cast<T>(Op::apply(x, y)); }
};
template <class Cvt, class Op>
struct ConvFn {
  __device__ uint16_t operator()(uint16_t x, uint16_t y) const {
    return Cvt::fromFloat(Op::apply(Cvt::toFloat(x), Cvt::toFloat(y)));
  }
};
template <typename T>
struct DivFloatFn {
  T divisor;
  __device__ T operator()(T x, T) const { return static_cast<T>(x / divisor); }
};
template <class Cvt>
struct DivConvFn {
  float divisor;
  __device__ uint16_t operator()(uint16_t x, uint16_t) const {
    return Cvt::fromFloat(Cvt::toFloat(x) / divisor);
  }
};
// Divided in 64 bits, as the CPU does: T(divisor) could truncate.
template <typename T>
struct DivIntFn {
  using W = std::conditional_t<std::is_same_v<T, uint64_t>, uint64_t, int64_t>;
  W divisor;
  __device__ T operator()(T x, T) const { return static_cast<T>(static_cast<W>(x) / divisor); }
};

union Vec16 {
  uint4 v;
  unsigned char bytes[16];
};

template <typename T, class F>
__global__ void mapKernel(T* d, const T* a, const T* b, size_t n, bool vectorised, F f) {
  constexpr size_t kPer = 16 / sizeof(T);
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t first = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  size_t done = 0;
  if (vectorised) {
    const size_t nvec = n / kPer;
    for (size_t v = first; v < nvec; v += stride) {
      Vec16 x, y, r;
      x.v = reinterpret_cast<const uint4*>(a)[v];
      y.v = reinterpret_cast<const uint4*>(b)[v];
#pragma unroll
      for (size_t k = 0; k < kPer; ++k) {
        T e = f(ld(reinterpret_cast<const T*>(x.bytes) + k),
                ld(reinterpret_cast<const T*>(y.bytes) + k));
        st(reinterpret_cast<T*>(r.bytes) + k, e);
      }
      reinterpret_cast<uint4*>(d)[v] = r.v;
    }
    done = nvec * kPer;
  }
  for (size_t i = done + first; i < n; i += stride) d[i] = f(a[i], b[i]);
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// The K of reduceDispatch/launch helpers: queues one kernel on the stream set by launchOn().
thread_local cudaStream_t tStream = nullptr;

template <typename T, class F>
void launch(T* d, const T* a, const T* b, size_t n, F f) {
  if (n == 0) return;
  bool vec = aligned16(d) && aligned16(a) && aligned16(b);
  size_t work = vec ? n / (16 / sizeof(T)) + 16 : n;
  size_t blocks = (work + kThreads - 1) / kThreads;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  mapKernel<<<static_cast<unsigned>(blocks), kThreads, 0, tStream>>>(d, a, b, n, vec, f);
}

struct CudaKernels {
  template <typename T, class Op>
  static void plain(T* d, const T* a, const T* b, size_t n) {
    launch(d, a, b, n, PlainFn<T, Op>{});
  }
  template <class Cvt, class Op>
  static void conv(uint16_t* d, const uint16_t* a, const uint16_t* b, size_t n) {
    launch(d, a, b, n, ConvFn<Cvt, Op>{});
  }
  template <typename T>
  static void divFloat(T* p, size_t n, T divisor) {
    launch(p, p, p, n, DivFloatFn<T>{divisor});
  }
  template <class Cvt>
  static void divConv(uint16_t* p, size_t n, float divisor) {
    launch(p, p, p, n, DivConvFn<Cvt>{divisor});
  }
  template <typename T>
  static void divInt(T* p, size_t n, int divisor) {
    launch(p, p, p, n, DivIntFn<T>{static_cast<typename DivIntFn<T>::W>(divisor)});
  }
};

Status lastError(const char* what) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return Status::okStatus();
  return systemError(what, ": ", cudaGetErrorString(e));
}

}  // namespace

bool deviceAvailable(std::string* why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    if (why)
      *why = strCat("no CUDA device: ", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return false;
  }
  return true;
}

Status reduce(void* dst, const void* a, const void* b, size_t n, DataType dt, RedOp op,
              void* stream) {
  tStream = static_cast<cudaStream_t>(stream);
  reduceDispatch<CudaKernels>(dst, a, b, n, dt, op);
  return lastError("CUDA reduce kernel launch");
}

Status divideInPlace(void* buf, size_t n, DataType dt, int divisor, void* stream) {
  tStream = static_cast<cudaStream_t>(stream);
  if (isFloat(dt)) {
    divideDispatch<CudaKernels>(buf, n, dt, divisor);
  } else if (divisor > 1 && n > 0) {
    // divideDispatch divides 64-bit integers with a host loop; the device needs its own.
    switch (dt) {
      case DataType::kInt64:
        CudaKernels::divInt(static_cast<int64_t*>(buf), n, divisor);
        break;
      case DataType::kUint64:
        CudaKernels::divInt(static_cast<uint64_t*>(buf), n, divisor);
        break;
      default:
        divideDispatch<CudaKernels>(buf, n, dt, divisor);
        break;
    }
  }
  return lastError("CUDA divide kernel launch");
}

}  // namespace loom::kernels::cuda
