// Loopback stream bandwidth of the tcp transport: 2 forked processes, rank 0 streams 64 MiB
// messages to rank 1 (one-way) for LOOM_TCP_NSOCKS = 1, 2, 4. Prints GB/s; asserts only that the
// data arrived. Label "long" (run with ctest -L long, or run the binary directly).
#include <gtest/gtest.h>

#include <cstdio>

#include "tcp_test_util.h"

namespace loom::testing {
namespace {

using transport::Request;

std::string stream(const UniqueId& id, int rank, int nsocks, int reps, double* gbs) {
  setEnvForRank("LOOM_TCP_NSOCKS", std::to_string(nsocks));
  TcpRank tr;
  RANK_OK(setupTcpRank(id, rank, 2, &tr));
  const size_t bytes = 64 << 20;
  std::vector<uint8_t> buf(bytes, rank == 0 ? 0x5A : 0);
  Request req;
  req.kind = rank == 0 ? Request::kSend : Request::kRecv;
  req.src = buf.data();
  req.dst = buf.data();
  req.bytes = bytes;
  // Warm-up, then timed repetitions between barriers.
  RANK_OK(tr.t->post(1 - rank, &req));
  RANK_OK(drive(tr.t.get(), {&req}));
  RANK_OK(tr.boot->barrier());
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) {
    RANK_OK(tr.t->post(1 - rank, &req));
    RANK_OK(drive(tr.t.get(), {&req}));
  }
  RANK_OK(tr.boot->barrier());
  double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  RANK_EXPECT(buf[bytes - 1] == 0x5A, "data did not arrive");
  *gbs = static_cast<double>(bytes) * reps / sec / 1e9;
  return "";
}

TEST(TcpStream, Loopback64MiB) {
  for (int nsocks : {1, 2, 4}) {
    UniqueId id = newUniqueId();
    auto res = forkRanks(2, [&](int r) -> std::string {
      double gbs = 0;
      std::string e = stream(id, r, nsocks, 10, &gbs);
      if (e.empty() && r == 1) {
        std::printf(
            "tcp loopback stream, 2 processes, 64 MiB x 10, LOOM_TCP_NSOCKS=%d: %.2f GB/s\n",
            nsocks, gbs);
        std::fflush(stdout);
      }
      return e;
    });
    EXPECT_EQ(failures(res), "");
  }
}

}  // namespace
}  // namespace loom::testing
