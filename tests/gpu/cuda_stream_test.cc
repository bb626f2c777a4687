// loomStreamCreateForCuda (api/cuda_order.h) with the fake driver's stream (fake_device.h): loom
// operations start after the GPU work queued before them, GPU work queued after them waits for
// them, and the thread that queues never blocks. Also a 2-rank all-reduce on device buffers whose
// input a "kernel" writes late and whose output a later "kernel" reads.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "coll/coll_checks.h"
#include "gpu/fake_device.h"
#include "harness/rank_harness.h"

namespace loom::testing {
namespace {

using std::chrono::milliseconds;

TEST(CudaStream, OrderedBothWaysWithoutBlockingTheCaller) {
  FakeDevice gpu(1 << 20);
  ASSERT_TRUE(gpu.ok());
  std::atomic<int> x{0}, y{0}, seenX{-1}, seenY{-1};
  gpu.launch([&] {  // the producer kernel, still running when loom's work is queued
    std::this_thread::sleep_for(milliseconds(300));
    x = 1;
  });
  loomStream_t s = nullptr;
  ASSERT_EQ(loomStreamCreateForCuda(&s, gpu.stream()), loomSuccess);
  struct Ctx {
    std::atomic<int>*x, *y, *seenX;
  } ctx{&x, &y, &seenX};
  ASSERT_EQ(loomStreamLaunchHostFunc(
                s,
                [](void* p, loomResult_t) {
                  auto* c = static_cast<Ctx*>(p);
                  *c->seenX = c->x->load();
                  *c->y = 2;
                },
                &ctx),
            loomSuccess);
  gpu.launch([&] { seenY = y.load(); });  // the consumer kernel
  EXPECT_EQ(x.load(), 0) << "queueing waited for the GPU";
  gpu.synchronize();
  ASSERT_EQ(loomStreamSynchronize(s, 60000), loomSuccess);
  EXPECT_EQ(seenX.load(), 1) << "loom ran before the GPU work queued before it";
  EXPECT_EQ(seenY.load(), 2) << "GPU work queued after loom's did not wait for it";
  EXPECT_EQ(loomStreamDestroy(s), loomSuccess);
}

TEST(CudaStream, RefusedWithoutADriverOrContext) {
  loomStream_t s = nullptr;
  // No libcuda here (or, on a GPU machine, no current context yet): a clear usage error.
  EXPECT_EQ(loomStreamCreateForCuda(&s, nullptr), loomInvalidUsage);
  EXPECT_EQ(loomStreamCreateForCuda(nullptr, nullptr), loomInvalidArgument);
}

std::string allReduceAfterKernel(int rank, int p, loomComm_t comm) {
  FakeDevice gpu(8 << 20);
  if (!gpu.ok()) return "fake device mapping failed";
  const size_t n = 100003;
  auto* buf = static_cast<float*>(gpu.dev(0));
  loomStream_t s = nullptr;
  LOOM_TRY(loomStreamCreateForCuda(&s, gpu.stream()));
  for (int iter = 0; iter < 3; ++iter) {
    gpu.launch([&] {  // writes the input late: loom must wait for it
      std::this_thread::sleep_for(milliseconds(50));
      for (size_t i = 0; i < n; ++i)
        gpu.view<float>(buf)[i] = static_cast<float>(rank + i % 7 + iter);
    });
    LOOM_TRY(loomAllReduce(buf, buf, n, loomFloat32, loomSum, comm, s));
    std::atomic<bool> right{false};
    gpu.launch([&] {  // reads the result: must run after loom wrote it
      bool ok = true;
      for (size_t i = 0; i < n && ok; ++i)
        ok = gpu.view<float>(buf)[i] == static_cast<float>(p * (i % 7 + iter) + p * (p - 1) / 2);
      right = ok;
    });
    gpu.synchronize();
    if (!right)
      return "a later kernel saw a wrong all-reduce result (iteration " + std::to_string(iter) +
             ")";
  }
  LOOM_TRY(loomStreamSynchronize(s, 60000));
  LOOM_TRY(loomStreamDestroy(s));
  return "";
}

TEST(CudaStream, AllReduceOnDeviceBuffersBetweenKernels) {
  RankOptions opt;
  opt.transport = "shm";
  EXPECT_EQ(failures(runRanks(2, allReduceAfterKernel, opt)), "");
}

}  // namespace
}  // namespace loom::testing
