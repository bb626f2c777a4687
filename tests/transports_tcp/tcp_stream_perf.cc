// Loopback numbers of the tcp transport, 2 forked processes driven the way the Executor drives a
// transport (progress, then wait): a one-way stream of 64 MiB messages and a bidirectional one
// (both ranks send and receive at once, as a 2-rank ring does) for LOOM_TCP_NSOCKS = 1, 2, 4, and
// a one-way stream that reduces on arrival, and the 8-byte ping-pong half round trip. Prints the
// numbers; asserts only that data arrived. Label "long" (run with ctest -L long, or run the binary
// directly).
#include <gtest/gtest.h>

#include <cstdio>

#include "tcp_test_util.h"

namespace loom::testing {
namespace {

using transport::Request;

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string stream(const UniqueId& id, int rank, int nsocks, bool bidir, bool reduce, int reps,
                   double* gbs) {
  setEnvForRank("LOOM_TCP_NSOCKS", std::to_string(nsocks));
  TcpRank tr;
  RANK_OK(setupTcpRank(id, rank, 2, &tr));
  const size_t bytes = 64 << 20;
  std::vector<uint8_t> out(bytes, 0x5A), in(bytes, 0);
  Request send, recv;
  send.kind = Request::kSend;
  send.src = out.data();
  recv.kind = Request::kRecv;
  recv.dst = in.data();
  if (reduce) {  // in place: in = in + incoming, float32
    recv.operand = in.data();
    recv.dtype = DataType::kFloat32;
    recv.op = RedOp::kSum;
  }
  send.bytes = recv.bytes = bytes;
  std::vector<Request*> mine;
  if (bidir || rank == 0) mine.push_back(&send);
  if (bidir || rank == 1) mine.push_back(&recv);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i <= reps; ++i) {  // i == 0 is the warm-up
    if (i == 1) {
      RANK_OK(tr.boot->barrier());
      t0 = std::chrono::steady_clock::now();
    }
    for (Request* r : mine) RANK_OK(tr.t->post(1 - rank, r));
    RANK_OK(drive(tr.t.get(), mine));
  }
  RANK_OK(tr.boot->barrier());
  *gbs = static_cast<double>(bytes) * reps / secondsSince(t0) / 1e9;
  if ((bidir || rank == 1) && !reduce) RANK_EXPECT(in[bytes - 1] == 0x5A, "data did not arrive");
  return "";
}

std::string pingPong(const UniqueId& id, int rank, int iters, double* halfRttUs) {
  TcpRank tr;
  RANK_OK(setupTcpRank(id, rank, 2, &tr));
  uint64_t v = 0;
  Request send, recv;
  send.kind = Request::kSend;
  send.src = reinterpret_cast<uint8_t*>(&v);
  recv.kind = Request::kRecv;
  recv.dst = reinterpret_cast<uint8_t*>(&v);
  send.bytes = recv.bytes = 8;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters + 100; ++i) {
    if (i == 100) t0 = std::chrono::steady_clock::now();
    if (rank == 0) {
      RANK_OK(tr.t->post(1, &send));
      RANK_OK(tr.t->post(1, &recv));
      RANK_OK(drive(tr.t.get(), {&send, &recv}));
      ++v;
    } else {
      RANK_OK(tr.t->post(0, &recv));
      RANK_OK(drive(tr.t.get(), {&recv}));
      RANK_OK(tr.t->post(0, &send));
      RANK_OK(drive(tr.t.get(), {&send}));
    }
  }
  *halfRttUs = secondsSince(t0) / iters / 2 * 1e6;
  if (rank == 0) RANK_EXPECT(v == static_cast<uint64_t>(iters + 100), v);
  return "";
}

TEST(TcpStream, Loopback64MiB) {
  for (bool bidir : {false, true}) {
    for (int nsocks : {1, 2, 4}) {
      UniqueId id = newUniqueId();
      auto res = forkRanks(2, [&](int r) -> std::string {
        double gbs = 0;
        std::string e = stream(id, r, nsocks, bidir, false, 10, &gbs);
        if (e.empty() && r == 1) {
          std::printf(
              "tcp loopback %s, 2 processes, 64 MiB x 10, LOOM_TCP_NSOCKS=%d: %.2f GB/s%s\n",
              bidir ? "bidirectional" : "one-way", nsocks, gbs, bidir ? " per direction" : "");
          std::fflush(stdout);
        }
        return e;
      });
      EXPECT_EQ(failures(res), "");
    }
  }
}

TEST(TcpStream, ReduceOnArrival64MiB) {
  UniqueId id = newUniqueId();
  auto res = forkRanks(2, [&](int r) -> std::string {
    double gbs = 0;
    std::string e = stream(id, r, 2, false, true, 10, &gbs);
    if (e.empty() && r == 1) {
      std::printf(
          "tcp loopback one-way, receive reducing (float32 sum, in place), 64 MiB x 10: "
          "%.2f GB/s\n",
          gbs);
      std::fflush(stdout);
    }
    return e;
  });
  EXPECT_EQ(failures(res), "");
}

TEST(TcpStream, PingPong8Bytes) {
  UniqueId id = newUniqueId();
  auto res = forkRanks(2, [&](int r) -> std::string {
    double us = 0;
    std::string e = pingPong(id, r, 5000, &us);
    if (e.empty() && r == 0) {
      std::printf("tcp loopback 8-byte ping-pong, 2 processes: %.1f us half round trip\n", us);
      std::fflush(stdout);
    }
    return e;
  });
  EXPECT_EQ(failures(res), "");
}

}  // namespace
}  // namespace loom::testing
