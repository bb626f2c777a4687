// Collectives on device memory through host staging (api/device_staging.h), on machines without a
// GPU: a fake driver (fake_device.h) hands out "device" addresses that crash on direct access, so
// these tests prove loom only touches device memory through driver copies, and gets every result
// right, over shm and tcp, blocking and on a stream, in place and out of place.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "coll/coll_checks.h"
#include "gpu/fake_device.h"
#include "harness/rank_harness.h"

namespace loom::testing {
namespace {

constexpr size_t kDevBytes = 64 << 20;

int32_t val(int r, uint64_t i) { return static_cast<int32_t>(r * 1000003 + i); }

std::string check(bool ok, const std::string& what) { return ok ? "" : what; }

std::string allReduce(FakeDevice& d, loomComm_t comm, int rank, int p, size_t n, bool inPlace,
                      loomStream_t st) {
  auto* send = static_cast<int32_t*>(d.dev(0));
  auto* recv = inPlace ? send : static_cast<int32_t*>(d.dev(32 << 20));
  for (size_t i = 0; i < n; ++i) d.view<int32_t>(send)[i] = val(rank, i);
  LOOM_TRY(loomAllReduce(send, recv, n, loomInt32, loomSum, comm, st));
  if (st) LOOM_TRY(loomStreamSynchronize(st, 60000));
  for (size_t i = 0; i < n; ++i) {
    int64_t want = 0;
    for (int q = 0; q < p; ++q) want += val(q, i);
    if (d.view<int32_t>(recv)[i] != static_cast<int32_t>(want))
      return "allreduce element " + std::to_string(i) + " wrong";
  }
  return check(d.copies() > 0, "no driver copy happened: device memory was not staged");
}

// Host send buffer, device receive buffer; root's data in place on the device.
std::string broadcastMixed(FakeDevice& d, loomComm_t comm, int rank, size_t n) {
  std::vector<int32_t> host(n);
  auto* recv = static_cast<int32_t*>(d.dev(0));
  for (size_t i = 0; i < n; ++i) host[i] = val(1, i);
  LOOM_TRY(loomBroadcast(host.data(), recv, n, loomInt32, 1, comm, nullptr));
  for (size_t i = 0; i < n; ++i)
    if (d.view<int32_t>(recv)[i] != val(1, i)) return "broadcast element wrong";
  return "";
}

std::string allGatherInPlace(FakeDevice& d, loomComm_t comm, int rank, int p, size_t n) {
  auto* buf = static_cast<int32_t*>(d.dev(4096));
  for (size_t i = 0; i < n; ++i) d.view<int32_t>(buf)[rank * n + i] = val(rank, i);
  LOOM_TRY(loomAllGather(buf + rank * n, buf, n, loomInt32, comm, nullptr));
  for (int q = 0; q < p; ++q)
    for (size_t i = 0; i < n; ++i)
      if (d.view<int32_t>(buf)[q * n + i] != val(q, i)) return "allgather block wrong";
  return "";
}

// All-to-all-v leaves gaps in recv; their device bytes must survive the staging.
std::string allToAllvGaps(FakeDevice& d, loomComm_t comm, int rank, int p) {
  std::vector<size_t> sc(p, 3), sd(p), rc(p, 3), rd(p);
  for (int q = 0; q < p; ++q) sd[q] = 3 * q, rd[q] = 4 * q;  // one-element gap after each block
  auto* send = static_cast<int32_t*>(d.dev(0));
  auto* recv = static_cast<int32_t*>(d.dev(1 << 20));
  for (int q = 0; q < p; ++q)
    for (int k = 0; k < 3; ++k) d.view<int32_t>(send)[3 * q + k] = val(rank, 10 * q + k);
  for (int i = 0; i < 4 * p; ++i) d.view<int32_t>(recv)[i] = -7;
  LOOM_TRY(loomAllToAllv(send, sc.data(), sd.data(), recv, rc.data(), rd.data(), loomInt32, comm,
                         nullptr));
  for (int q = 0; q < p; ++q) {
    for (int k = 0; k < 3; ++k)
      if (d.view<int32_t>(recv)[4 * q + k] != val(q, 10 * rank + k)) return "alltoallv block wrong";
    if (d.view<int32_t>(recv)[4 * q + 3] != -7) return "alltoallv overwrote a gap";
  }
  return "";
}

RankBody body(size_t n) {
  return [n](int rank, int p, loomComm_t comm) -> std::string {
    FakeDevice d(kDevBytes);
    if (!d.ok()) return "fake device mapping failed";
    loomStream_t st = nullptr;
    LOOM_TRY(loomStreamCreate(&st));
    std::string e;
    for (bool inPlace : {false, true})
      for (loomStream_t s : {static_cast<loomStream_t>(nullptr), st})
        if (e.empty()) e = allReduce(d, comm, rank, p, n, inPlace, s);
    if (e.empty()) e = broadcastMixed(d, comm, rank, n);
    if (e.empty()) e = allGatherInPlace(d, comm, rank, p, n);
    if (e.empty()) e = allToAllvGaps(d, comm, rank, p);
    LOOM_TRY(loomStreamDestroy(st));
    return e;
  };
}

struct Case {
  const char* transport;
  int ranks;
  size_t count;
};
class DeviceStaging : public ::testing::TestWithParam<Case> {};

TEST_P(DeviceStaging, EveryCallRightThroughDriverCopies) {
  RankOptions opt;
  opt.transport = GetParam().transport;
  EXPECT_EQ(failures(runRanks(GetParam().ranks, body(GetParam().count), opt)), "");
}

INSTANTIATE_TEST_SUITE_P(Transports, DeviceStaging,
                         ::testing::Values(Case{"shm", 2, 1}, Case{"shm", 3, 100003},
                                           Case{"tcp", 2, 4099}),
                         [](const auto& info) {
                           return std::string(info.param.transport) + "_p" +
                                  std::to_string(info.param.ranks) + "_n" +
                                  std::to_string(info.param.count);
                         });

TEST(DeviceMemoryKind, HostManagedAndDevicePointers) {
  int onStack = 0;
  EXPECT_FALSE(cuda::isDeviceMemory(&onStack));  // no driver on the machine, or a host pointer
  FakeDevice d(1 << 20);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(cuda::isDeviceMemory(d.dev(100)));
  EXPECT_FALSE(cuda::isDeviceMemory(&onStack));
  d.setManaged(true);  // managed memory is host-addressable: no staging
  EXPECT_FALSE(cuda::isDeviceMemory(d.dev(100)));
}

}  // namespace
}  // namespace loom::testing
