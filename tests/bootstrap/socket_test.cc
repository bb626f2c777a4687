// Socket utilities: LOOM_SOCKET_IFNAME grammar, interface choice, addresses, deadlines.
#include "core/socket.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "core/params.h"

namespace loom::net {
namespace {

TEST(SocketIfname, Grammar) {
  EXPECT_TRUE(ifnameMatches("", "eth0"));
  EXPECT_TRUE(ifnameMatches("eth", "eth0"));
  EXPECT_TRUE(ifnameMatches("ib,eth", "eth1"));
  EXPECT_FALSE(ifnameMatches("ib", "eth0"));
  EXPECT_FALSE(ifnameMatches("^eth", "eth0"));
  EXPECT_TRUE(ifnameMatches("^eth,docker", "ib0"));
  EXPECT_FALSE(ifnameMatches("^eth,docker", "docker0"));
  EXPECT_TRUE(ifnameMatches("=eth0", "eth0"));
  EXPECT_FALSE(ifnameMatches("=eth0", "eth01"));
  EXPECT_TRUE(ifnameMatches("^=eth0", "eth01"));
  EXPECT_FALSE(ifnameMatches("^=eth0,lo", "lo"));
}

TEST(SocketIfname, DefaultSkipsLoopbackAndSpecSelects) {
  std::vector<Interface> all, lo;
  ASSERT_TRUE(findInterfaces("", 0, &all).ok());
  ASSERT_FALSE(all.empty());
  ASSERT_TRUE(findInterfaces("=lo", 0, &lo).ok());
  ASSERT_FALSE(lo.empty());
  EXPECT_EQ(lo[0].addr.host(), "127.0.0.1");
  std::vector<Interface> nonLo;
  ASSERT_TRUE(findInterfaces("^lo", 0, &nonLo).ok());
  if (!nonLo.empty()) {
    EXPECT_NE(all[0].name, "lo");
  }
  std::vector<Interface> v6;
  ASSERT_TRUE(findInterfaces("=lo", AF_INET6, &v6).ok());
  for (const auto& i : v6) EXPECT_EQ(i.addr.family(), AF_INET6);

  setenv("LOOM_SOCKET_IFNAME", "=lo", 1);
  params::resetCacheForTesting();
  Interface itf;
  ASSERT_TRUE(chooseInterface(&itf).ok());
  EXPECT_EQ(itf.name, "lo");
  setenv("LOOM_SOCKET_IFNAME", "=nosuchif0", 1);
  params::resetCacheForTesting();
  Status s = chooseInterface(&itf);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("nosuchif0"), std::string::npos) << s.message();
  unsetenv("LOOM_SOCKET_IFNAME");
  params::resetCacheForTesting();
}

TEST(SocketAddr, ParseAndFormat) {
  SockAddr a;
  ASSERT_TRUE(parseAddr("127.0.0.1:1234", &a).ok());
  EXPECT_EQ(a.toString(), "127.0.0.1:1234");
  EXPECT_EQ(a.port(), 1234);
  ASSERT_TRUE(parseAddr("[::1]:80", &a).ok());
  EXPECT_EQ(a.family(), AF_INET6);
  EXPECT_EQ(a.toString(), "[::1]:80");
  EXPECT_FALSE(parseAddr("127.0.0.1", &a).ok());
  EXPECT_FALSE(parseAddr("host.example:12", &a).ok());
  EXPECT_FALSE(parseAddr("1.2.3.4:99999", &a).ok());
}

void loopbackEcho(const char* host) {
  SockAddr any, bound;
  ASSERT_TRUE(parseHost(host, 0, &any).ok());
  Fd l;
  ASSERT_TRUE(listenOn(any, 16, &l, &bound).ok());
  ASSERT_NE(bound.port(), 0);
  Fd c, s;
  ASSERT_TRUE(connectTo(bound, Deadline::afterMs(2000), nullptr, &c).ok());
  ASSERT_TRUE(acceptConn(l.get(), Deadline::afterMs(2000), nullptr, &s).ok());
  std::vector<char> big(8 << 20, 'x'), got(8 << 20);
  std::thread t([&] {
    ASSERT_TRUE(sendAll(c.get(), big.data(), big.size(), Deadline::afterMs(10000), nullptr).ok());
  });
  ASSERT_TRUE(recvAll(s.get(), got.data(), got.size(), Deadline::afterMs(10000), nullptr).ok());
  t.join();
  EXPECT_EQ(big, got);
  // A receive with nothing coming times out; a closed peer is a remote error, never SIGPIPE.
  char x;
  EXPECT_EQ(recvAll(s.get(), &x, 1, Deadline::afterMs(100), nullptr).code(), Code::kTimeout);
  c.reset();
  EXPECT_EQ(recvAll(s.get(), &x, 1, Deadline::afterMs(1000), nullptr).code(), Code::kRemoteError);
  Status st;
  for (int i = 0; i < 100 && st.ok(); ++i)
    st = sendAll(s.get(), big.data(), 4096, Deadline::afterMs(1000), nullptr);
  EXPECT_EQ(st.code(), Code::kRemoteError) << st.toString();
}

TEST(Socket, LoopbackIPv4) { loopbackEcho("127.0.0.1"); }
TEST(Socket, LoopbackIPv6) {
  std::vector<Interface> v6;
  ASSERT_TRUE(findInterfaces("=lo", AF_INET6, &v6).ok());
  if (v6.empty()) GTEST_SKIP() << "no IPv6 on lo";
  loopbackEcho("::1");
}

TEST(Socket, ConnectRefusedTimesOutAndAbortIsPrompt) {
  SockAddr a;
  ASSERT_TRUE(parseHost("127.0.0.1", 0, &a).ok());
  Fd l;
  SockAddr bound;
  ASSERT_TRUE(listenOn(a, 1, &l, &bound).ok());
  l.reset();  // nobody listens there any more
  Fd c;
  auto t0 = std::chrono::steady_clock::now();
  Status s = connectTo(bound, Deadline::afterMs(300), nullptr, &c);
  EXPECT_EQ(s.code(), Code::kTimeout) << s.toString();
  std::atomic<bool> abort{false};
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    abort = true;
  });
  s = connectTo(bound, Deadline::afterMs(10000), &abort, &c);
  t.join();
  EXPECT_NE(s.message().find("aborted"), std::string::npos) << s.toString();
  double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(sec, 2.0);
}

TEST(Socket, RandomBytesDiffer) {
  uint8_t a[16], b[16];
  ASSERT_TRUE(randomBytes(a, 16).ok());
  ASSERT_TRUE(randomBytes(b, 16).ok());
  EXPECT_NE(std::memcmp(a, b, 16), 0);
}

}  // namespace
}  // namespace loom::net
