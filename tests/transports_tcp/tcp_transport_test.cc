// TCP transport: forked ranks set up with the real bootstrap; contents, FIFO order, reduce on
// arrival, size mismatch, dead peers, wake(), refused connections, and a loopback stream number.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstring>
#include <filesystem>
#include <thread>

#include "core/log.h"
#include "core/params.h"
#include "kernels/reduce.h"
#include "tcp_test_util.h"

namespace loom::testing {
namespace {

using transport::Request;

// Every rank sends `bytes` to every other rank and receives from each, all posted at once.
std::string exchangeAll(TcpRank& tr, int rank, int n, uint64_t bytes) {
  std::vector<std::vector<uint8_t>> in(n), out(n);
  std::vector<Request> sends(n), recvs(n);
  std::vector<Request*> all;
  for (int p = 0; p < n; ++p) {
    if (p == rank) continue;
    out[p].resize(bytes);
    for (uint64_t i = 0; i < bytes; ++i) out[p][i] = patternByte(i, rank, p);
    in[p].assign(bytes, 0xEE);
    sends[p].kind = Request::kSend;
    sends[p].src = out[p].data();
    sends[p].bytes = bytes;
    recvs[p].kind = Request::kRecv;
    recvs[p].dst = in[p].data();
    recvs[p].bytes = bytes;
    RANK_OK(tr.t->post(p, &recvs[p]));
    RANK_OK(tr.t->post(p, &sends[p]));
    all.push_back(&sends[p]);
    all.push_back(&recvs[p]);
  }
  RANK_OK(drive(tr.t.get(), all));
  for (int p = 0; p < n; ++p) {
    if (p == rank) continue;
    RANK_EXPECT(recvs[p].doneBytes == bytes, recvs[p].doneBytes);
    for (uint64_t i = 0; i < bytes; ++i) {
      RANK_EXPECT(in[p][i] == patternByte(i, p, rank), "byte ", i, " from ", p);
    }
  }
  RANK_OK(tr.boot->barrier());
  return "";
}

// nsocks/pieceBytes > 0 set LOOM_TCP_NSOCKS / LOOM_TCP_PIECE_BYTES (forked ranks only).
std::string allToAll(const UniqueId& id, int rank, int n, uint64_t bytes, int nsocks,
                     int pieceBytes) {
  if (nsocks > 0) {  // forked ranks only: the environment is per process
    setEnvForRank("LOOM_TCP_NSOCKS", std::to_string(nsocks));
    setEnvForRank("LOOM_TCP_PIECE_BYTES", std::to_string(pieceBytes));
  }
  TcpRank tr;
  RANK_OK(setupTcpRank(id, rank, n, &tr));
  return exchangeAll(tr, rank, n, bytes);
}

struct SizeCase {
  int n;
  uint64_t bytes;
  int nsocks;
  int piece;
};

class TcpSizes : public ::testing::TestWithParam<SizeCase> {};

TEST_P(TcpSizes, AllToAllContents) {
  SizeCase c = GetParam();
  UniqueId id = newUniqueId();
  auto res =
      forkRanks(c.n, [&](int r) { return allToAll(id, r, c.n, c.bytes, c.nsocks, c.piece); });
  EXPECT_EQ(failures(res), "");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TcpSizes,
    ::testing::Values(SizeCase{2, 0, 2, 524288}, SizeCase{2, 1, 2, 524288},
                      SizeCase{2, 7, 2, 524288}, SizeCase{2, (1 << 20) + 3, 2, 524288},
                      SizeCase{2, 64 << 20, 2, 524288}, SizeCase{3, (1 << 20) + 3, 1, 524288},
                      SizeCase{3, (1 << 20) + 3, 3, 4096}, SizeCase{4, 100003, 4, 8192},
                      SizeCase{8, 70001, 2, 16384}));

// The whole path over IPv6: root, bootstrap ring and tcp sockets.
TEST(TcpTransport, IPv6EndToEnd) {
  setEnvForRank("LOOM_SOCKET_FAMILY", "AF_INET6");
  char idBytes[bootstrap::kUniqueIdBytes];
  Status s = bootstrap::makeUniqueId(idBytes);
  unsetenv("LOOM_SOCKET_FAMILY");
  params::resetCacheForTesting();
  if (!s.ok()) GTEST_SKIP() << "no IPv6 interface: " << s.toString();
  UniqueId id;
  std::memcpy(id.bytes, idBytes, sizeof(idBytes));
  auto res = forkRanks(3, [&](int r) -> std::string {
    TcpRank tr;
    RANK_OK(setupTcpRank(id, r, 3, &tr));
    RANK_EXPECT(tr.boot->peers()[r].address.find(':') != std::string::npos,
                "not an IPv6 address: ", tr.boot->peers()[r].address);
    return exchangeAll(tr, r, 3, (1 << 20) + 3);
  });
  EXPECT_EQ(failures(res), "");
}

TEST(TcpTransport, FifoManyQueuedRequests) {
  UniqueId id = newUniqueId();
  auto res = forkRanks(2, [&](int r) -> std::string {
    setEnvForRank("LOOM_TCP_PIECE_BYTES", "4096");
    TcpRank tr;
    RANK_OK(setupTcpRank(id, r, 2, &tr));
    constexpr int kN = 600;
    std::vector<std::vector<uint8_t>> bufs(kN);
    std::vector<Request> reqs(kN);
    std::vector<Request*> ptrs;
    for (int i = 0; i < kN; ++i) {
      size_t bytes = (i * 7919) % 20011;  // 0 included, up to ~5 pieces
      bufs[i].assign(bytes, r == 0 ? static_cast<uint8_t>(i) : 0xEE);
      reqs[i].kind = r == 0 ? Request::kSend : Request::kRecv;
      reqs[i].src = bufs[i].data();
      reqs[i].dst = bufs[i].data();
      reqs[i].bytes = bytes;
      RANK_OK(tr.t->post(1 - r, &reqs[i]));
      ptrs.push_back(&reqs[i]);
    }
    auto t0 = std::chrono::steady_clock::now();
    while (!reqs.back().complete) {
      bool moved = false;
      RANK_OK(tr.t->progress(&moved));
      for (int i = 1; i < kN; ++i) {
        RANK_EXPECT(!reqs[i].complete || reqs[i - 1].complete, "request ", i, " before ", i - 1);
      }
      if (!moved) RANK_OK(tr.t->wait(10000));
      RANK_EXPECT(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60), "timeout");
    }
    for (int i = 0; i < kN; ++i) {
      for (uint8_t v : bufs[i]) RANK_EXPECT(v == static_cast<uint8_t>(i), "request ", i);
    }
    RANK_OK(tr.boot->barrier());
    return "";
  });
  EXPECT_EQ(failures(res), "");
}

struct ReduceCase {
  DataType dt;
  RedOp op;
  size_t count;
  bool inPlace;
  int piece;
};

class TcpReduce : public ::testing::TestWithParam<ReduceCase> {};

// Rank 0 sends its vector; rank 1 receives it reducing with its own: dst = mine (op) incoming.
TEST_P(TcpReduce, OnArrival) {
  ReduceCase c = GetParam();
  UniqueId id = newUniqueId();
  auto res = forkRanks(2, [&](int r) -> std::string {
    setEnvForRank("LOOM_TCP_PIECE_BYTES", std::to_string(c.piece));
    TcpRank tr;
    RANK_OK(setupTcpRank(id, r, 2, &tr));
    size_t esz = dtypeSize(c.dt);
    size_t bytes = c.count * esz;
    auto fill = [&](int who, std::vector<uint8_t>* v) {
      v->resize(bytes);
      for (size_t i = 0; i < c.count; ++i) {
        double x = static_cast<double>((i * 13 + who * 7) % 29) + 1;
        uint8_t* p = v->data() + i * esz;
        switch (c.dt) {
          case DataType::kFloat32: {
            float f = static_cast<float>(x);
            std::memcpy(p, &f, 4);
            break;
          }
          case DataType::kFloat64:
            std::memcpy(p, &x, 8);
            break;
          case DataType::kInt32: {
            int32_t k = static_cast<int32_t>(x) - 10;
            std::memcpy(p, &k, 4);
            break;
          }
          case DataType::kFloat16: {
            uint16_t h = kernels::floatToHalf(static_cast<float>(x));
            std::memcpy(p, &h, 2);
            break;
          }
          default: {
            uint8_t b = static_cast<uint8_t>(x);
            std::memset(p, b, esz);
            break;
          }
        }
      }
    };
    std::vector<uint8_t> mine, theirs;
    fill(r, &mine);
    fill(1 - r, &theirs);
    Request req;
    std::vector<uint8_t> dst(bytes, 0xEE);
    if (r == 0) {
      req.kind = Request::kSend;
      req.src = mine.data();
    } else {
      req.kind = Request::kRecv;
      req.operand = mine.data();
      req.dst = c.inPlace ? mine.data() : dst.data();
      req.dtype = c.dt;
      req.op = c.op;
    }
    req.bytes = bytes;
    std::vector<uint8_t> expect(bytes);
    if (r == 1)
      kernels::reduceScalar(expect.data(), mine.data(), theirs.data(), c.count, c.dt, c.op);
    RANK_OK(tr.t->post(1 - r, &req));
    RANK_OK(drive(tr.t.get(), {&req}));
    if (r == 1) {
      const uint8_t* got = c.inPlace ? mine.data() : dst.data();
      RANK_EXPECT(bytes == 0 || std::memcmp(got, expect.data(), bytes) == 0,
                  "reduced result differs");
    }
    RANK_OK(tr.boot->barrier());
    return "";
  });
  EXPECT_EQ(failures(res), "");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TcpReduce,
    ::testing::Values(ReduceCase{DataType::kFloat32, RedOp::kSum, 7, false, 524288},
                      ReduceCase{DataType::kFloat32, RedOp::kSum, (1 << 18) + 3, true, 524288},
                      ReduceCase{DataType::kFloat64, RedOp::kMin, 100003, false, 4096},
                      ReduceCase{DataType::kInt32, RedOp::kMax, 300007, true, 8192},
                      ReduceCase{DataType::kFloat16, RedOp::kSum, 99999, false, 4096},
                      ReduceCase{DataType::kUint8, RedOp::kProd, 12345, false, 4096},
                      ReduceCase{DataType::kFloat32, RedOp::kSum, 0, false, 4096}));

TEST(TcpTransport, SizeMismatchIsAnErrorNamingThePeer) {
  UniqueId id = newUniqueId();
  auto res = forkRanks(2, [&](int r) -> std::string {
    TcpRank tr;
    RANK_OK(setupTcpRank(id, r, 2, &tr));
    std::vector<uint8_t> buf(100, 1);
    Request req;
    req.kind = r == 0 ? Request::kSend : Request::kRecv;
    req.src = buf.data();
    req.dst = buf.data();
    req.bytes = r == 0 ? 100 : 50;
    RANK_OK(tr.t->post(1 - r, &req));
    if (r == 0) {
      RANK_OK(drive(tr.t.get(), {&req}));
    } else {
      Status s = drive(tr.t.get(), {&req}, 10000);
      RANK_EXPECT(s.code() == Code::kInvalidUsage, s.toString());
      RANK_EXPECT(s.message().find("has 100 bytes but this rank posted a receive of 50") !=
                      std::string::npos,
                  s.message());
      RANK_EXPECT(s.message().find("rank 0 (host") != std::string::npos, s.message());
    }
    RANK_OK(tr.boot->barrier());
    return "";
  });
  EXPECT_EQ(failures(res), "");
}

// Rank 0 dies (SIGKILL) in the middle of a 64 MiB transfer; rank 1 was receiving from it and
// rank 2 sending to it: both get RemoteError naming rank 0 within a few seconds.
TEST(TcpTransport, KilledPeerIsRemoteErrorNamingIt) {
  UniqueId id = newUniqueId();
  auto res = forkRanks(3, [&](int r) -> std::string {
    TcpRank tr;
    RANK_OK(setupTcpRank(id, r, 3, &tr));
    const size_t bytes = 64 << 20;
    std::vector<uint8_t> buf(bytes, 3);
    Request a, b;
    a.bytes = b.bytes = bytes;
    a.kind = Request::kSend;
    a.src = buf.data();
    b.kind = Request::kRecv;
    b.dst = buf.data();
    RANK_OK(tr.boot->barrier());
    if (r == 0) {
      RANK_OK(tr.t->post(1, &a));
      while (a.doneBytes < (4u << 20)) {
        bool moved;
        RANK_OK(tr.t->progress(&moved));
        if (!moved) RANK_OK(tr.t->wait(10000));
      }
      raise(SIGKILL);
    }
    Request* mine = r == 1 ? &b : &a;
    RANK_OK(tr.t->post(0, mine));
    auto t0 = std::chrono::steady_clock::now();
    Status s = drive(tr.t.get(), {mine}, 30000);
    double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    RANK_EXPECT(s.code() == Code::kRemoteError, s.toString());
    RANK_EXPECT(s.message().find("peer rank 0 (host") != std::string::npos, s.message());
    RANK_EXPECT(s.message().find("closed the connection") != std::string::npos ||
                    s.message().find("died") != std::string::npos,
                s.message());
    RANK_EXPECT(sec < 5.0, "took ", sec, " s");
    // The error is sticky.
    bool moved;
    RANK_EXPECT(tr.t->progress(&moved).code() == Code::kRemoteError, "");
    return "";
  });
  EXPECT_EQ(res[0].termSignal, SIGKILL);
  res.erase(res.begin());
  EXPECT_EQ(failures(res), "");
}

TEST(TcpTransport, WakeInterruptsWait) {
  UniqueId id = newUniqueId();
  TcpRank tr;
  ASSERT_TRUE(setupTcpRank(id, 0, 1, &tr).ok());
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(tr.t->wait(100000).ok());  // nothing to wait for: sleeps the timeout
  double slept = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(slept, 0.09);
  std::thread waker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    tr.t->wake();
  });
  t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(tr.t->wait(10000000).ok());
  double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  waker.join();
  EXPECT_LT(sec, 1.0);
  EXPECT_STREQ(tr.t->caps().name, "tcp");
}

TEST(TcpTransport, WrongCommunicatorTokenIsRefusedAndLogged) {
  UniqueId id = newUniqueId();
  // Warnings must reach stderr whatever the caller's LOOM_DEBUG / LOOM_DEBUG_FILE say.
  setenv("LOOM_DEBUG", "WARN", 1);
  unsetenv("LOOM_DEBUG_FILE");
  params::resetCacheForTesting();
  log::reloadForTesting();
  ::testing::internal::CaptureStderr();
  auto res = threadRanks(2, [&](int r) -> std::string {
    TcpRank tr;
    Status s = setupTcpRank(id, r, 2, &tr, 1500, r == 0 ? "aaaa" : "bbbb");
    RANK_EXPECT(!s.ok(), "setup with mismatched tokens succeeded");
    if (r == 1) {
      RANK_EXPECT(s.code() == Code::kTimeout, s.toString());
      RANK_EXPECT(s.message().find("waiting for connections from ranks 0") != std::string::npos,
                  s.message());
    }
    return "";
  });
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(failures(res), "");
  EXPECT_NE(err.find("refused connection from"), std::string::npos) << err;
  EXPECT_NE(err.find("wrong communicator token"), std::string::npos) << err;
}

int openFds() {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd"))
    n += e.exists() ? 1 : 0;
  return n;
}

// Ranks as threads of one process, communicators made and destroyed repeatedly: contents are
// right and no descriptor stays open.
TEST(TcpTransport, ThreadRanksAndNoDescriptorLeft) {
  auto once = [] {
    UniqueId id = newUniqueId();
    auto res = threadRanks(3, [&](int r) { return allToAll(id, r, 3, (1 << 20) + 3, 0, 0); });
    EXPECT_EQ(failures(res), "");
  };
  once();
  int before = openFds();
  for (int i = 0; i < 4; ++i) once();
  int after = openFds();
  for (int i = 0; i < 200 && after > before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    after = openFds();
  }
  EXPECT_EQ(after, before);
}

TEST(TcpTransport, BadPostArguments) {
  UniqueId id = newUniqueId();
  TcpRank tr;
  ASSERT_TRUE(setupTcpRank(id, 0, 1, &tr).ok());
  Request req;
  req.bytes = 4;
  EXPECT_EQ(tr.t->post(0, &req).code(), Code::kInvalidArgument);
  EXPECT_EQ(tr.t->post(5, &req).code(), Code::kInvalidArgument);
  EXPECT_EQ(tr.t->post(0, nullptr).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace loom::testing
