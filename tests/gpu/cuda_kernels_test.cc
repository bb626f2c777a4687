// The GPU reduction kernels against the CPU's scalar kernels, bit for bit, for every dtype x op, at
// aligned and unaligned addresses and odd counts, with NaN, infinities and integer overflow in the
// inputs. Skips, saying why, where loom was built without CUDA or no GPU is present.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/reduce.h"
#include "kernels/reduce_cuda.h"
#ifdef LOOM_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace loom::kernels {
namespace {

#define SKIP_WITHOUT_GPU()                                 \
  do {                                                     \
    std::string why;                                       \
    if (!cuda::deviceAvailable(&why)) GTEST_SKIP() << why; \
  } while (0)

// Random bytes, with some special float values planted for float types.
std::vector<uint8_t> inputs(DataType dt, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n * dtypeSize(dt));
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  if (dt == DataType::kFloat32) {  // keep most values ordinary so sums are not all NaN
    auto* f = reinterpret_cast<float*>(v.data());
    for (size_t i = 0; i < n; ++i)
      f[i] = i % 97 == 5
                 ? NAN
                 : (i % 89 == 3 ? INFINITY : static_cast<float>(rng() % 20001) / 7.0f - 1000.0f);
  }
  return v;
}

// Float elements that differ only in the payload of a NaN, which IEEE leaves open for sum, prod
// and division (reduce.h).
bool bothNaN(DataType dt, const uint8_t* x, const uint8_t* y) {
  auto nan = [dt](const uint8_t* p) {
    uint64_t u = 0;
    std::memcpy(&u, p, dtypeSize(dt));
    switch (dt) {
      case DataType::kFloat32:
        return (u & 0x7fffffffu) > 0x7f800000u;
      case DataType::kFloat64:
        return (u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
      case DataType::kFloat16:
        return (u & 0x7fffu) > 0x7c00u;
      case DataType::kBfloat16:
        return (u & 0x7fffu) > 0x7f80u;
      default:
        return false;
    }
  };
  return nan(x) && nan(y);
}

#ifdef LOOM_HAVE_CUDA
struct DeviceBuf {
  explicit DeviceBuf(size_t bytes) { EXPECT_EQ(cudaMalloc(&p, bytes + 64), cudaSuccess); }
  ~DeviceBuf() { cudaFree(p); }
  uint8_t* at(size_t off) { return static_cast<uint8_t*>(p) + off; }
  void* p = nullptr;
};

// dst = a op b on the GPU (at byte offset `shift` from 256-byte alignment) and on the CPU.
void compare(DataType dt, RedOp op, size_t n, size_t shift) {
  const size_t es = dtypeSize(dt), bytes = n * es;
  auto a = inputs(dt, n, 1 + n), b = inputs(dt, n, 7 + n);
  std::vector<uint8_t> want(bytes), got(bytes);
  reduceScalar(want.data(), a.data(), b.data(), n, dt, op);
  DeviceBuf da(bytes), db(bytes), dd(bytes);
  ASSERT_EQ(cudaMemcpy(da.at(shift), a.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(db.at(shift), b.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_TRUE(cuda::reduce(dd.at(shift), da.at(shift), db.at(shift), n, dt, op, nullptr).ok());
  ASSERT_EQ(cudaMemcpy(got.data(), dd.at(shift), bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  for (size_t i = 0; i < n; ++i) {
    if (std::memcmp(&want[i * es], &got[i * es], es) == 0) continue;
    const bool arith = op == RedOp::kSum || op == RedOp::kProd;  // max/min keep payloads exactly
    if (arith && bothNaN(dt, &want[i * es], &got[i * es])) continue;
    FAIL() << dtypeName(dt) << " " << opName(op) << " n=" << n << " shift=" << shift << ": element "
           << i << " differs from the CPU kernel";
  }
}
#endif

TEST(CudaKernels, EveryDtypeAndOpMatchesTheCpuBitForBit) {
  SKIP_WITHOUT_GPU();
#ifdef LOOM_HAVE_CUDA
  for (int t = 0; t < kNumDataTypes; ++t)
    for (int o = 0; o < kNumRedOps - 1; ++o)  // kAvg is kSum then a division, tested below
      for (size_t n : {size_t{1}, size_t{7}, size_t{4099}, size_t{1} << 20})
        for (size_t shift : {size_t{0}, dtypeSize(static_cast<DataType>(t))})
          compare(static_cast<DataType>(t), static_cast<RedOp>(o), n, shift);
#endif
}

TEST(CudaKernels, DivideMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
#ifdef LOOM_HAVE_CUDA
  for (int t = 0; t < kNumDataTypes; ++t) {
    const DataType dt = static_cast<DataType>(t);
    const size_t n = 10007, bytes = n * dtypeSize(dt);
    auto a = inputs(dt, n, 3);
    std::vector<uint8_t> got(bytes);
    DeviceBuf d(bytes);
    ASSERT_EQ(cudaMemcpy(d.p, a.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_TRUE(cuda::divideInPlace(d.p, n, dt, 3, nullptr).ok());
    ASSERT_EQ(cudaMemcpy(got.data(), d.p, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    divideInPlace(a.data(), n, dt, 3);
    const size_t es = dtypeSize(dt);
    for (size_t i = 0; i < n; ++i)
      if (std::memcmp(&a[i * es], &got[i * es], es) != 0 && !bothNaN(dt, &a[i * es], &got[i * es]))
        FAIL() << dtypeName(dt) << ": element " << i << " differs from the CPU's division";
  }
#endif
}

TEST(CudaKernels, WithoutAGpuTheReasonIsGiven) {
  std::string why;
  if (cuda::deviceAvailable(&why)) GTEST_SKIP() << "a GPU is present";
  EXPECT_FALSE(why.empty());
  float x = 1;  // a host pointer: the kernel cannot run without a device
  EXPECT_FALSE(cuda::reduce(&x, &x, &x, 1, DataType::kFloat32, RedOp::kSum, nullptr).ok());
}

}  // namespace
}  // namespace loom::kernels
