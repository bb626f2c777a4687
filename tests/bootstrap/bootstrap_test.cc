// Bootstrap: rendezvous, allGather/barrier/send/recv, job-key refusal, timeouts, dead peers, ids.
#include "core/bootstrap.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "bootstrap/fork_ranks.h"
#include "core/log.h"
#include "core/params.h"
#include "core/socket.h"

namespace loom::bootstrap {
namespace {

using loom::testing::failures;
using loom::testing::forkRanks;
using loom::testing::threadRanks;

#define RANK_EXPECT(cond, ...)                                                    \
  do {                                                                            \
    if (!(cond)) return strCat("line ", __LINE__, ": ", #cond, " ", __VA_ARGS__); \
  } while (0)
#define RANK_OK(expr)                                                                 \
  do {                                                                                \
    Status s_ = (expr);                                                               \
    if (!s_.ok()) return strCat("line ", __LINE__, ": ", #expr, ": ", s_.toString()); \
  } while (0)

struct Id {
  char bytes[kUniqueIdBytes];
};

Id newId() {
  Id id;
  Status s = makeUniqueId(id.bytes);
  EXPECT_TRUE(s.ok()) << s.toString();
  return id;
}

// Everything a user of the bootstrap checks, run by every rank.
std::string exercise(const Id& id, int rank, int n) {
  std::unique_ptr<Bootstrap> b;
  RANK_OK(Bootstrap::create(id.bytes, rank, n, 30000, nullptr, &b));
  RANK_EXPECT(b->rank() == rank && b->nranks() == n, "");
  const auto& peers = b->peers();
  RANK_EXPECT(static_cast<int>(peers.size()) == n, "peers ", peers.size());
  for (int r = 0; r < n; ++r) {
    RANK_EXPECT(peers[r].rank == r, "peer ", r, " says rank ", peers[r].rank);
    RANK_EXPECT(peers[r].hostIndex == 0, "all ranks share this host, got ", peers[r].hostIndex);
    RANK_EXPECT(!peers[r].address.empty() && !peers[r].hostname.empty(), "");
    RANK_EXPECT(peers[r].cpuMask == peers[rank].cpuMask && !peers[r].cpuMask.empty(),
                "every rank here may use the same CPUs; rank ", r, "'s mask did not come across");
  }
  RANK_EXPECT(hostCpus(peers, 0) == usableCpus(), hostCpus(peers, 0), " != ", usableCpus());
  // allGather of an odd size, twice, then a larger one.
  for (size_t bytes : {size_t{13}, size_t{1}, size_t{100000}}) {
    std::vector<uint8_t> buf(n * bytes, 0);
    for (size_t i = 0; i < bytes; ++i) buf[rank * bytes + i] = static_cast<uint8_t>(rank * 31 + i);
    RANK_OK(b->allGather(buf.data(), bytes));
    for (int r = 0; r < n; ++r) {
      for (size_t i = 0; i < bytes; ++i) {
        RANK_EXPECT(buf[r * bytes + i] == static_cast<uint8_t>(r * 31 + i), "slot ", r, " byte ",
                    i);
      }
    }
  }
  RANK_OK(b->barrier());
  // Tagged messages to every peer, sent in one tag order and received in the other.
  for (int p = 0; p < n; ++p) {
    int a = rank * 1000 + p, c = -rank;
    RANK_OK(b->send(p, 7, &a, sizeof(a)));
    RANK_OK(b->send(p, 3, &c, sizeof(c)));
  }
  for (int p = 0; p < n; ++p) {
    int a = 0, c = 1;
    RANK_OK(b->recv(p, 3, &c, sizeof(c)));
    RANK_OK(b->recv(p, 7, &a, sizeof(a)));
    RANK_EXPECT(a == p * 1000 + rank && c == -p, "from ", p, ": ", a, " ", c);
  }
  // Same tag: order is kept.
  int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  for (int i = 0; i < 5; ++i) RANK_OK(b->send(next, 1, &i, sizeof(i)));
  for (int i = 0; i < 5; ++i) {
    int v = -1;
    RANK_OK(b->recv(prev, 1, &v, sizeof(v)));
    RANK_EXPECT(v == i, "message ", i, " arrived as ", v);
  }
  RANK_OK(b->barrier());
  return "";
}

class BootstrapRanks : public ::testing::TestWithParam<int> {};

TEST_P(BootstrapRanks, Threads) {
  int n = GetParam();
  Id id = newId();
  auto res = threadRanks(n, [&](int r) { return exercise(id, r, n); });
  EXPECT_EQ(failures(res), "");
}

TEST_P(BootstrapRanks, Processes) {
  int n = GetParam();
  Id id = newId();
  auto res = forkRanks(n, [&](int r) { return exercise(id, r, n); });
  EXPECT_EQ(failures(res), "");
}

INSTANTIATE_TEST_SUITE_P(N, BootstrapRanks, ::testing::Values(1, 2, 3, 8));

// The CPUs a host's ranks may use together: the union of their masks, so two ranks pinned to a
// core each (mpirun --bind-to core) do not count as sharing one CPU.
TEST(HostCpus, UnionOfTheRanksMasksPerHost) {
  auto mask = [](std::initializer_list<int> cpus) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus) CPU_SET(c, &set);
    std::string b(reinterpret_cast<const char*>(&set), sizeof set);
    while (!b.empty() && b.back() == 0) b.pop_back();
    return b;
  };
  std::vector<PeerIdentity> ids(4);
  ids[0].hostIndex = ids[1].hostIndex = ids[2].hostIndex = 0;
  ids[3].hostIndex = 1;
  ids[0].cpuMask = mask({0});
  ids[1].cpuMask = mask({1});
  ids[2].cpuMask = mask({1, 70});
  ids[3].cpuMask = mask({5});
  EXPECT_EQ(hostCpus(ids, 0), 3);
  EXPECT_EQ(hostCpus(ids, 1), 1);
  ids[1].cpuMask.clear();  // unknown: this process's own count
  EXPECT_EQ(hostCpus(ids, 0), usableCpus());
}

TEST(Bootstrap, ManyCommunicatorsConcurrentlyAndSequentially) {
  for (int round = 0; round < 3; ++round) {
    std::vector<Id> ids;
    for (int c = 0; c < 4; ++c) ids.push_back(newId());
    auto res = threadRanks(12, [&](int t) { return exercise(ids[t / 3], t % 3, 3); });
    EXPECT_EQ(failures(res), "") << "round " << round;
  }
}

// Many ranks as threads of one process (each holds a listen socket and its two ring
// connections; the root holds O(1) descriptors at a time): identities, allGather, barrier.
TEST(Bootstrap, SixtyFourRanks) {
  constexpr int kN = 64;
  Id id = newId();
  auto res = threadRanks(kN, [&](int r) -> std::string {
    std::unique_ptr<Bootstrap> b;
    RANK_OK(Bootstrap::create(id.bytes, r, kN, 60000, nullptr, &b));
    for (int p = 0; p < kN; ++p) RANK_EXPECT(b->peers()[p].rank == p, p);
    std::vector<int> v(kN, -1);
    v[r] = r * r;
    RANK_OK(b->allGather(v.data(), sizeof(int)));
    for (int p = 0; p < kN; ++p) RANK_EXPECT(v[p] == p * p, p);
    RANK_OK(b->barrier());
    return "";
  });
  EXPECT_EQ(failures(res), "");
}

int openFds() {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd"))
    n += e.exists() ? 1 : 0;
  return n;
}

// Communicators come and go in one process: the root threads exit after serving and nothing
// stays open.
TEST(Bootstrap, NoDescriptorLeftBehind) {
  auto once = [] {
    Id id = newId();
    auto res = threadRanks(3, [&](int r) { return exercise(id, r, 3); });
    EXPECT_EQ(failures(res), "");
  };
  once();  // warm-up (gtest, logging, first-use allocations)
  int before = openFds();
  for (int i = 0; i < 5; ++i) once();
  int after = openFds();
  for (int i = 0; i < 200 && after > before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    after = openFds();
  }
  EXPECT_EQ(after, before);
}

TEST(Bootstrap, WrongJobKeyIsRefusedAndLogged) {
  Id id = newId();
  // Find the root address by decoding a copy of the id whose key we corrupt.
  // Warnings must reach stderr whatever the caller's LOOM_DEBUG / LOOM_DEBUG_FILE say.
  setenv("LOOM_DEBUG", "WARN", 1);
  unsetenv("LOOM_DEBUG_FILE");
  params::resetCacheForTesting();
  log::reloadForTesting();
  ::testing::internal::CaptureStderr();
  net::SockAddr root;
  {
    // Root address: bytes 6..7 port, 8..23 address (IPv4 in the first 4), see bootstrap_wire.h.
    uint16_t family = 0, port = 0;
    std::memcpy(&family, id.bytes + 6, 2);
    std::memcpy(&port, id.bytes + 8, 2);
    ASSERT_EQ(family, AF_INET) << "test expects an IPv4 root";
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    std::memcpy(&a.sin_addr, id.bytes + 10, 4);
    std::memcpy(&root.storage, &a, sizeof(a));
    root.len = sizeof(a);
  }
  // An HTTP request, and a rendezvous hello with the right magic but a wrong key.
  std::string wrongKey("LMBH0123456789abcdef\x10\0\0\0", 24);
  for (std::string garbage : {std::string("GET / HTTP/1.0\r\n\r\n"), wrongKey}) {
    garbage.resize(40, 'x');
    net::Fd fd;
    ASSERT_TRUE(net::connectTo(root, net::Deadline::afterMs(5000), nullptr, &fd).ok());
    ASSERT_TRUE(
        net::sendAll(fd.get(), garbage.data(), 40, net::Deadline::afterMs(5000), nullptr).ok());
    // The root refuses it: our socket sees the close.
    char c;
    Status s = net::recvAll(fd.get(), &c, 1, net::Deadline::afterMs(5000), nullptr);
    EXPECT_EQ(s.code(), Code::kRemoteError) << s.toString();
  }
  auto res = threadRanks(2, [&](int r) { return exercise(id, r, 2); });
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(failures(res), "");
  EXPECT_NE(err.find("refused connection from"), std::string::npos) << err;
  EXPECT_NE(err.find("did not present this job's key"), std::string::npos) << err;
}

TEST(Bootstrap, TimeoutNamesMissingRanks) {
  Id id = newId();
  auto t0 = std::chrono::steady_clock::now();
  auto res = threadRanks(3, [&](int r) -> std::string {
    if (r == 1) return "";  // never arrives
    std::unique_ptr<Bootstrap> b;
    Status s = Bootstrap::create(id.bytes, r, 3, 1000, nullptr, &b);
    RANK_EXPECT(s.code() == Code::kTimeout, s.toString());
    RANK_EXPECT(s.message().find("ranks 1 of 3 never arrived") != std::string::npos, s.message());
    return "";
  });
  double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(failures(res), "");
  EXPECT_LT(sec, 3.5);
}

TEST(Bootstrap, DeadPeerIsRemoteErrorNamingIt) {
  Id id = newId();
  auto res = forkRanks(3, [&](int r) -> std::string {
    std::unique_ptr<Bootstrap> b;
    RANK_OK(Bootstrap::create(id.bytes, r, 3, 20000, nullptr, &b));
    RANK_OK(b->barrier());
    if (r == 2) raise(SIGKILL);  // dies without a word
    int v = 0;
    auto t0 = std::chrono::steady_clock::now();
    // Rank 0 has a ring connection from rank 2, rank 1 none: both must notice.
    Status s = b->recv(2, 5, &v, sizeof(v));
    double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    RANK_EXPECT(s.code() == Code::kRemoteError, s.toString());
    RANK_EXPECT(s.message().find("rank 2 (host") != std::string::npos, s.message());
    RANK_EXPECT(sec < 5, sec);
    return "";
  });
  EXPECT_EQ(res[2].termSignal, SIGKILL);
  res.pop_back();
  EXPECT_EQ(failures(res), "");
}

TEST(Bootstrap, AbortReturnsPromptly) {
  Id id = newId();
  std::atomic<bool> abort{false}, done{false};
  auto res = threadRanks(2, [&](int r) -> std::string {
    std::unique_ptr<Bootstrap> b;
    RANK_OK(Bootstrap::create(id.bytes, r, 2, 60000, &abort, &b));
    if (r == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      abort = true;
      while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return "";
    }
    struct Done {
      std::atomic<bool>* d;
      ~Done() { *d = true; }
    } markDone{&done};
    int v;
    auto t0 = std::chrono::steady_clock::now();
    Status s = b->recv(1, 0, &v, sizeof(v));
    double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    RANK_EXPECT(!s.ok() && s.message().find("aborted") != std::string::npos, s.toString());
    RANK_EXPECT(sec < 1.0, sec);
    return "";
  });
  EXPECT_EQ(failures(res), "");
}

// Reusing an id after its communicator formed is a prompt, explained error, not a hang.
TEST(Bootstrap, ReusedIdFailsFast) {
  Id id = newId();
  std::unique_ptr<Bootstrap> b;
  ASSERT_TRUE(Bootstrap::create(id.bytes, 0, 1, 60000, nullptr, &b).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the root thread exits
  auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Bootstrap> again;
  Status s = Bootstrap::create(id.bytes, 0, 1, 60000, nullptr, &again);
  double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(s.code(), Code::kRemoteError) << s.toString();
  EXPECT_NE(s.message().find("already used"), std::string::npos) << s.message();
  EXPECT_LT(sec, 1.0);
}

TEST(Bootstrap, BadArguments) {
  Id id = newId();
  std::unique_ptr<Bootstrap> b;
  EXPECT_EQ(Bootstrap::create(nullptr, 0, 1, 1000, nullptr, &b).code(), Code::kInvalidArgument);
  EXPECT_EQ(Bootstrap::create(id.bytes, 2, 2, 1000, nullptr, &b).code(), Code::kInvalidArgument);
  EXPECT_EQ(Bootstrap::create(id.bytes, 0, 0, 1000, nullptr, &b).code(), Code::kInvalidArgument);
  char zero[kUniqueIdBytes] = {0};
  Status s = Bootstrap::create(zero, 0, 1, 1000, nullptr, &b);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("not a loom unique id"), std::string::npos) << s.message();
  ASSERT_TRUE(Bootstrap::create(id.bytes, 0, 1, 1000, nullptr, &b).ok());
  int v = 0;
  EXPECT_EQ(b->send(1, 0, &v, 4).code(), Code::kInvalidArgument);
  EXPECT_EQ(b->send(0, -3, &v, 4).code(), Code::kInvalidArgument);
  ASSERT_TRUE(b->send(0, 0, &v, 4).ok());
  char big[8];
  s = b->recv(0, 0, big, 8);
  EXPECT_EQ(s.code(), Code::kInvalidUsage);
  EXPECT_NE(s.message().find("expected 8 bytes"), std::string::npos) << s.message();
}

TEST(UniqueId, StringRoundTrip) {
  Id id = newId();
  std::string text = idToString(id.bytes);
  EXPECT_EQ(text.size(), 2 * kUniqueIdBytes);
  char back[kUniqueIdBytes];
  ASSERT_TRUE(idFromString(text + "\n", back).ok());
  EXPECT_EQ(std::memcmp(back, id.bytes, kUniqueIdBytes), 0);
  EXPECT_EQ(idTag(id.bytes).size(), 32u);
  EXPECT_EQ(idTag(id.bytes), idTag(back));
  Id other = newId();
  EXPECT_NE(idTag(id.bytes), idTag(other.bytes));
  // The id still works after the round trip.
  std::unique_ptr<Bootstrap> b;
  ASSERT_TRUE(Bootstrap::create(back, 0, 1, 5000, nullptr, &b).ok());
}

TEST(UniqueId, MalformedStringsAreErrors) {
  Id id = newId();
  std::string text = idToString(id.bytes);
  char out[kUniqueIdBytes];
  Status s = idFromString(text.substr(1), out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("255 characters"), std::string::npos) << s.message();
  std::string bad = text;
  bad[17] = 'g';
  s = idFromString(bad, out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("'g' at position 17"), std::string::npos) << s.message();
  s = idFromString(std::string(256, '0'), out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("not a loom unique id"), std::string::npos) << s.message();
  EXPECT_FALSE(idFromString("", out).ok());
}

}  // namespace
}  // namespace loom::bootstrap
