// Multi-channel schedules (algo/channels.h, ring_rail): exact in the in-memory checker for
// p = 1..17, odd counts and several host layouts and channel counts; the snake order keeps every
// hop between hosts on one local index (rail); every step carries its channel.
#include <gtest/gtest.h>

#include <set>

#include "algo/channels.h"
#include "algo/registry.h"
#include "sched/checker.h"

namespace loom::algo {
namespace {

std::vector<int> hostsOf(int p, int perHost) {
  std::vector<int> h(p);
  for (int r = 0; r < p; ++r) h[r] = r / perHost;
  return h;
}

TEST(AlgoChannels, RingRailExactForAllShapes) {
  for (int p = 1; p <= 17; ++p) {
    for (int perHost : {1, 2, 3, 4, 8}) {
      for (int k : {0, 1, 2, 3, 5, 8}) {
        for (uint64_t count : {uint64_t{0}, uint64_t{1}, uint64_t(p - 1), uint64_t{1001}}) {
          for (bool inPlace : {false, true}) {
            CollArgs a;
            a.count = count;
            a.channels = k;
            a.inPlace = inPlace;
            a.chunkBytes = 64;
            Status s = sched::checkCollective(&buildAllReduceRingRail, a, p, hostsOf(p, perHost));
            ASSERT_TRUE(s.ok()) << "p=" << p << " perHost=" << perHost << " k=" << k
                                << " count=" << count << ": " << s.toString();
          }
        }
      }
    }
  }
}

TEST(AlgoChannels, OddLayoutsAndLargeCounts) {
  const std::vector<std::vector<int>> layouts = {
      {0, 0, 0, 1, 1, 2, 2},                    // unequal hosts
      {5, 5, 5, 9, 9, 9, 2, 2, 2, 7, 7, 7},     // arbitrary host ids
      {0, 1, 0, 1, 0, 1},                       // interleaved
      {0, 0, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3},  // 2..4 per host
  };
  for (const auto& hosts : layouts) {
    for (int k : {0, 2, 4, 7}) {
      CollArgs a;
      a.count = 100003;
      a.channels = k;
      a.chunkBytes = 4096;
      a.dtype = DataType::kFloat64;
      Status s = sched::checkCollective(&buildAllReduceRingRail, a, hosts.size(), hosts);
      ASSERT_TRUE(s.ok()) << "k=" << k << " host[1]=" << hosts[1] << ": " << s.toString();
    }
  }
}

TEST(AlgoChannels, SnakeHopsBetweenHostsStayOnOneRail) {
  for (int hosts : {2, 3, 4, 16}) {
    const int B = 8, p = hosts * B;
    Group g;
    g.nranks = p;
    g.hostOf = hostsOf(p, B);
    for (int c = 0; c < B; ++c) {
      std::vector<int> o = channelOrder(g, c, ChannelOrder::kSnake);
      ASSERT_EQ(std::set<int>(o.begin(), o.end()).size(), static_cast<size_t>(p));
      int crossRail = 0;
      std::set<int> exits;
      for (int v = 0; v < p; ++v) {
        const int a = o[v], b = o[(v + 1) % p];
        if (a / B == b / B) continue;
        crossRail += a % B != b % B;
        if (a / B == 0) exits.insert(a % B);
      }
      // An odd number of hosts: the wrap-around hop changes rail once.
      EXPECT_EQ(crossRail, hosts % 2) << "hosts=" << hosts << " channel " << c;
      EXPECT_EQ(exits.size(), 1u);
    }
  }
}

TEST(AlgoChannels, EachNicCarriesOneChannel) {
  // 4 hosts x 8: every local index leaves its host in exactly one channel.
  const int B = 8, p = 32;
  Group g;
  g.nranks = p;
  g.hostOf = hostsOf(p, B);
  for (int h = 0; h < 4; ++h) {
    std::multiset<int> leaving;
    for (int c = 0; c < B; ++c) {
      std::vector<int> o = channelOrder(g, c, ChannelOrder::kSnake);
      for (int v = 0; v < p; ++v)
        if (o[v] / B == h && o[(v + 1) % p] / B != h) leaving.insert(o[v] % B);
    }
    for (int j = 0; j < B; ++j) EXPECT_EQ(leaving.count(j), 1u) << "host " << h << " GPU " << j;
  }
}

TEST(AlgoChannels, StepsCarryTheirChannel) {
  CollArgs a;
  a.count = 4096;
  a.channels = 4;
  Group g;
  g.nranks = 8;
  g.hostOf = hostsOf(8, 4);
  g.rank = 5;
  Schedule s;
  ASSERT_TRUE(buildAllReduceRingRail(a, g, &s).ok());
  EXPECT_EQ(s.channels, 4);
  std::set<int> seen;
  for (const sched::Step& st : s.steps) seen.insert(st.channel);
  EXPECT_EQ(seen, (std::set<int>{0, 1, 2, 3}));
}

TEST(AlgoChannels, BadChannelCountIsAnError) {
  CollArgs a;
  a.count = 16;
  Group g;
  g.nranks = 2;
  Schedule s;
  Status st = buildChannels(a, g, &buildAllReduceRing, 0, ChannelOrder::kSnake, "x", &s);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  a.coll = CollType::kAllGather;
  st = buildChannels(a, g, &buildAllReduceRing, 2, ChannelOrder::kSnake, "x", &s);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace loom::algo
