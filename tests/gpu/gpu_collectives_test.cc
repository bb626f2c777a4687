// Every collective on real GPU memory (cudaMalloc), ranks as processes sharing one GPU: each call
// runs once on host buffers and once on device buffers with the same inputs, and the outputs must
// be identical; then an all-reduce ordered with a CUDA stream (loomStreamCreateForCuda). Skips,
// saying why, where loom was built without CUDA or no GPU is present.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <vector>

#include "coll/coll_checks.h"
#include "harness/rank_harness.h"
#include "kernels/reduce_cuda.h"
#ifdef LOOM_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace loom::testing {
namespace {

#ifdef LOOM_HAVE_CUDA
using Call = std::function<loomResult_t(const void* send, void* recv)>;

// Runs call on host and on device copies of the same send buffer; "" when outputs agree.
std::string sameOnDevice(const char* what, loomComm_t comm, size_t sendBytes, size_t recvBytes,
                         int rank, const Call& call) {
  std::vector<uint8_t> send(sendBytes + 1), hostOut(recvBytes + 1, 0x5a), devOut(recvBytes + 1);
  for (size_t i = 0; i < sendBytes; ++i)
    send[i] = static_cast<uint8_t>((i * 131 + rank * 17) % 251);
  LOOM_TRY(call(send.data(), hostOut.data()));
  void *ds = nullptr, *dr = nullptr;
  if (cudaMalloc(&ds, sendBytes + 1) != cudaSuccess ||
      cudaMalloc(&dr, recvBytes + 1) != cudaSuccess)
    return "cudaMalloc failed";
  cudaMemcpy(ds, send.data(), sendBytes + 1, cudaMemcpyHostToDevice);
  cudaMemset(dr, 0x5a, recvBytes + 1);
  loomResult_t r = call(ds, dr);
  cudaMemcpy(devOut.data(), dr, recvBytes + 1, cudaMemcpyDeviceToHost);
  cudaFree(ds);
  cudaFree(dr);
  if (r != loomSuccess) return std::string(what) + " on device memory: " + loomGetLastError(comm);
  return hostOut == devOut ? "" : std::string(what) + ": device result differs from host result";
}

// Upload, all-reduce and download all queued on one CUDA stream, loom's part through
// loomStreamCreateForCuda; only the final cudaStreamSynchronize waits.
std::string onCudaStream(int rank, int p, loomComm_t comm) {
  const size_t n = 1 << 20;
  std::vector<float> in(n), out(n, -1.0f);
  for (size_t i = 0; i < n; ++i) in[i] = static_cast<float>(rank + i % 13);
  cudaStream_t cs;
  void* d = nullptr;
  if (cudaStreamCreate(&cs) != cudaSuccess || cudaMalloc(&d, n * 4) != cudaSuccess)
    return "cudaStreamCreate/cudaMalloc failed";
  loomStream_t ls = nullptr;
  LOOM_TRY(loomStreamCreateForCuda(&ls, cs));
  cudaMemcpyAsync(d, in.data(), n * 4, cudaMemcpyHostToDevice, cs);
  LOOM_TRY(loomAllReduce(d, d, n, loomFloat32, loomSum, comm, ls));
  cudaMemcpyAsync(out.data(), d, n * 4, cudaMemcpyDeviceToHost, cs);
  if (cudaStreamSynchronize(cs) != cudaSuccess) return "cudaStreamSynchronize failed";
  LOOM_TRY(loomStreamSynchronize(ls, 60000));
  LOOM_TRY(loomStreamDestroy(ls));
  cudaFree(d);
  cudaStreamDestroy(cs);
  for (size_t i = 0; i < n; ++i)
    if (out[i] != static_cast<float>(p * (i % 13) + p * (p - 1) / 2))
      return "all-reduce on a CUDA-ordered stream: element " + std::to_string(i) + " wrong";
  return "";
}

std::string everyCollective(int rank, int p, loomComm_t comm) {
  if (cudaSetDevice(0) != cudaSuccess) return "cudaSetDevice(0) failed";
  const size_t n = 1 << 18, b = n * 4;
  std::vector<std::pair<const char*, std::function<std::string()>>> calls = {
      {"allreduce",
       [&] {
         return sameOnDevice("allreduce", comm, b, b, rank, [&](const void* s, void* r) {
           return loomAllReduce(s, r, n, loomFloat32, loomSum, comm, nullptr);
         });
       }},
      {"allreduce bf16 max",
       [&] {
         return sameOnDevice("allreduce bf16", comm, b, b, rank, [&](const void* s, void* r) {
           return loomAllReduce(s, r, 2 * n, loomBfloat16, loomMax, comm, nullptr);
         });
       }},
      {"broadcast",
       [&] {
         return sameOnDevice("broadcast", comm, b, b, rank, [&](const void* s, void* r) {
           return loomBroadcast(s, r, n, loomFloat32, p - 1, comm, nullptr);
         });
       }},
      {"reduce",
       [&] {
         return sameOnDevice("reduce", comm, b, b, rank, [&](const void* s, void* r) {
           return loomReduce(s, r, n, loomInt32, loomProd, 0, comm, nullptr);
         });
       }},
      {"allgather",
       [&] {
         return sameOnDevice("allgather", comm, b, b * p, rank, [&](const void* s, void* r) {
           return loomAllGather(s, r, n, loomFloat32, comm, nullptr);
         });
       }},
      {"reducescatter",
       [&] {
         return sameOnDevice("reducescatter", comm, b * p, b, rank, [&](const void* s, void* r) {
           return loomReduceScatter(s, r, n, loomFloat32, loomSum, comm, nullptr);
         });
       }},
      {"alltoall",
       [&] {
         return sameOnDevice("alltoall", comm, b * p, b * p, rank, [&](const void* s, void* r) {
           return loomAllToAll(s, r, n, loomFloat32, comm, nullptr);
         });
       }},
      {"gather",
       [&] {
         return sameOnDevice("gather", comm, b, b * p, rank, [&](const void* s, void* r) {
           return loomGather(s, r, n, loomFloat32, 0, comm, nullptr);
         });
       }},
      {"scatter",
       [&] {
         return sameOnDevice("scatter", comm, b * p, b, rank, [&](const void* s, void* r) {
           return loomScatter(s, r, n, loomFloat32, 0, comm, nullptr);
         });
       }},
  };
  for (auto& [name, run] : calls) {
    std::string e = run();
    if (!e.empty()) return e;
  }
  return onCudaStream(rank, p, comm);
}
#endif

// Asks in a child process: CUDA must not be initialised in the parent, whose forked ranks use it.
bool gpuPresent(std::string* why) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  pid_t pid = fork();
  if (pid == 0) {
    std::string w;
    bool ok = kernels::cuda::deviceAvailable(&w);
    (void)!write(fds[1], w.data(), w.size());
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  char buf[512];
  ssize_t len = read(fds[0], buf, sizeof(buf));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  *why = std::string(buf, len > 0 ? len : 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

class GpuCollectives : public ::testing::TestWithParam<int> {};

TEST_P(GpuCollectives, DeviceBuffersGiveTheHostResult) {
  std::string why;
  if (!gpuPresent(&why)) GTEST_SKIP() << why;
#ifdef LOOM_HAVE_CUDA
  RankOptions opt;
  opt.transport = "shm";
  EXPECT_EQ(failures(runRanks(GetParam(), everyCollective, opt)), "");
#endif
}

INSTANTIATE_TEST_SUITE_P(Ranks, GpuCollectives, ::testing::Values(2, 4));

}  // namespace
}  // namespace loom::testing
