// Bandwidth of loom's GPU reduction kernel (float32 sum, dst = a + b) against a device-to-device
// cudaMemcpy of the same size, in one run: median of 20 timed repetitions each, after warm-up.
// Bytes moved: memcpy reads and writes n bytes (2n); the reduction reads 2n and writes n (3n).
// Usage: cuda_reduce_bw [MiB]   (default 256). Prints one line per measurement and the ratio.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/reduce_cuda.h"

namespace {

#define CK(call)                                                       \
  do {                                                                 \
    cudaError_t e_ = (call);                                           \
    if (e_ != cudaSuccess) {                                           \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                    \
    }                                                                  \
  } while (0)

template <typename F>
double medianMs(F f) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) f();
  std::vector<float> ms;
  for (int i = 0; i < 20; ++i) {
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float t = 0;
    CK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string why;
  if (!loom::kernels::cuda::deviceAvailable(&why)) {
    std::printf("cuda_reduce_bw: skipped: %s\n", why.c_str());
    return 0;
  }
  const size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256;
  const size_t bytes = mib << 20, n = bytes / sizeof(float);
  void *a, *b, *d;
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  CK(cudaMalloc(&d, bytes));
  CK(cudaMemset(a, 0, bytes));
  CK(cudaMemset(b, 0, bytes));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  double copyMs = medianMs([&] { CK(cudaMemcpyAsync(d, a, bytes, cudaMemcpyDeviceToDevice)); });
  double redMs = medianMs([&] {
    if (!loom::kernels::cuda::reduce(d, a, b, n, loom::DataType::kFloat32, loom::RedOp::kSum,
                                     nullptr)
             .ok())
      std::exit(1);
  });
  double copyGBs = 2.0 * bytes / copyMs / 1e6, redGBs = 3.0 * bytes / redMs / 1e6;
  std::printf("device: %s\n", prop.name);
  std::printf("memcpy D2D %zu MiB: %.3f ms, %.1f GB/s (2n bytes moved)\n", mib, copyMs, copyGBs);
  std::printf("reduce f32 sum %zu MiB: %.3f ms, %.1f GB/s (3n bytes moved)\n", mib, redMs, redGBs);
  std::printf("reduce / memcpy bandwidth: %.2f (target >= 0.90)\n", redGBs / copyGBs);
  CK(cudaFree(a));
  CK(cudaFree(b));
  CK(cudaFree(d));
  return 0;
}
