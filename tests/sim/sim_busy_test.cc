// Oversubscription by busy ranks (SimOptions::busySlowdown): with more ranks busy on a host than
// it has cores, the host's cores deliver 1 / f(k) of their capacity, k the ranks busy right now.
// Priced against the closed forms a user would write down: 4 ranks on 2 cores, f(4) = 1.5.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "algo/registry.h"
#include "sim/engine.h"
#include "sim/local_host.h"
#include "sim/schedule_set.h"
#include "sim_compute_util.h"

namespace loom::sim {
namespace {

using testing::eachRank;
using testing::oneHost;
using testing::reduceOnly;
using testing::run;

constexpr uint64_t kBytes = 8 << 20;
constexpr double kReduce = 5e9;  // bytes/s one core reduces
constexpr double kF4 = 1.5;      // slowdown with 4 ranks busy on 2 cores

SimOptions options(bool busy) {
  SimOptions o;
  o.computeShared = true;
  o.reduceGBps = kReduce / 1e9;
  o.hostCores = 2;
  o.sendCoreGBps = o.recvCoreGBps = 6;
  o.latNvlinkUs = o.latPcieUs = o.latNetUs = o.latHopUs = 0;
  if (busy) o.busySlowdown = {{4, kF4}};
  return o;
}

// Two ranks busy on two cores: a core each, not slowed. Four busy: each gets 2 / 1.5 / 4 of a core
// (1/3) instead of 1/2, exactly f(4) = 1.5 times slower. Three busy: f(3) = 1.25 (linear between
// (2 cores, 1) and (4, 1.5)), 1.6 cores for 3 ranks.
TEST(SimBusy, SlowdownFollowsTheBusyRanks) {
  auto net = oneHost(4);
  const double b = kBytes;
  EXPECT_NEAR(run(*net, reduceOnly({kBytes, kBytes, 0, 0}), options(true)), b / kReduce, 1e-12);
  EXPECT_NEAR(run(*net, reduceOnly({kBytes, kBytes, 0, 0}), options(false)), b / kReduce, 1e-12);
  const ScheduleSet all = reduceOnly({kBytes, kBytes, kBytes, kBytes});
  EXPECT_NEAR(run(*net, all, options(false)), 2 * b / kReduce, 1e-12);
  EXPECT_NEAR(run(*net, all, options(true)), kF4 * 2 * b / kReduce, 1e-12);
  const ScheduleSet three = reduceOnly({kBytes, kBytes, kBytes, 0});
  EXPECT_NEAR(run(*net, three, options(false)), 1.5 * b / kReduce, 1e-12);
  EXPECT_NEAR(run(*net, three, options(true)), b / (1.6 / 3 * kReduce), 1e-12);
}

// The slowdown ends when ranks finish: ranks 0-2 reduce S, rank 3 2S. All four at 1/3 of a core
// until 0-2 are done (3S/r; rank 3 has S left), then rank 3 alone on its own core (S/r): 4S/r.
// Without the option 2S/r + S/r.
TEST(SimBusy, CapacityComesBackWhenRanksFinish) {
  auto net = oneHost(4);
  const ScheduleSet set = reduceOnly({kBytes, kBytes, kBytes, 2 * kBytes});
  EXPECT_NEAR(run(*net, set, options(true)), 4.0 * kBytes / kReduce, 1e-12);
  EXPECT_NEAR(run(*net, set, options(false)), 3.0 * kBytes / kReduce, 1e-12);
}

// Transfers the CPUs move (1/6 core-ns per byte on each side). A chain 0 -> 1 -> 2 -> 3 (each rank
// forwards what it received) keeps two ranks busy at a time: S / 6 GB/s per hop, 3 hops, with
// or without the option. Two pairs exchanging at once keep all four busy: 4 flows each costing
// 2/6 core-ns per byte (both sides) share the 2 cores: 4 x 2/6 x S / 2 ns, x 1.5 with the option.
TEST(SimBusy, TwoBusyRanksAtATimeAreNotSlowed) {
  auto net = oneHost(4);
  const ScheduleSet chain = eachRank(4, [](int r, sched::Schedule* s) {
    const int in = r > 0 ? s->recv(r - 1, {sched::kBufRecv, 0}, kBytes) : -1;
    if (r == 0) s->send(1, {sched::kBufSend, 0}, kBytes);
    if (r > 0 && r < 3) s->send(r + 1, {sched::kBufRecv, 0}, kBytes, {in});
  });
  const double hop = kBytes / 6e9;
  EXPECT_NEAR(run(*net, chain, options(false)), 3 * hop, 1e-12);
  EXPECT_EQ(run(*net, chain, options(true)), run(*net, chain, options(false)));
  const ScheduleSet pairs = eachRank(4, [](int r, sched::Schedule* s) {
    s->send(r ^ 1, {sched::kBufSend, 0}, kBytes);
    s->recv(r ^ 1, {sched::kBufRecv, 0}, kBytes);
  });
  const double all = 4 * (2 / 6e9) * kBytes / 2;
  EXPECT_NEAR(run(*net, pairs, options(false)), all, 1e-12);
  EXPECT_NEAR(run(*net, pairs, options(true)), kF4 * all, 1e-12);
}

// By demand (SimOptions::busyByDemand) a busy rank counts as the share of its core its flows
// would take alone. Two pairs, 0 -> 1 and 2 -> 3, each held to 3 GB/s by the pair's rate: each
// side then takes 3/6 of a core, 4 x 1/2 = 2 busy, within the 2 cores: S / 3 GB/s. Counted
// as 4 busy ranks instead, the cores deliver 2 / 1.5 and 4 sides of 1/6 ns per byte share them:
// 2 GB/s per flow.
TEST(SimBusy, ByDemandCountsHalfBusyRanksAsHalf) {
  auto net = oneHost(4);
  const ScheduleSet set = eachRank(4, [](int r, sched::Schedule* s) {
    if (r % 2 == 0)
      s->send(r + 1, {sched::kBufSend, 0}, kBytes);
    else
      s->recv(r - 1, {sched::kBufRecv, 0}, kBytes);
  });
  SimOptions o = options(false);
  o.pairGBps = 3;
  EXPECT_NEAR(run(*net, set, o), kBytes / 3e9, 1e-12);
  o.busySlowdown = {{4, kF4}};
  EXPECT_NEAR(run(*net, set, o), kBytes / 2e9, 1e-12);
  o.busyByDemand = true;
  EXPECT_NEAR(run(*net, set, o), kBytes / 3e9, 1e-12);
}

// A ring all-reduce keeps every rank busy at every step: f(8) times the time without the option,
// f(8) read off the second point (4: 1.2, 8: 1.6; 8 ranks on 2 cores). The tree on the same ranks
// leaves ranks idle between its levels and is slowed less.
TEST(SimBusy, RingAllBusySlowedByFTreeLess) {
  const int p = 8;
  auto net = oneHost(p);
  sched::CollArgs args;
  args.count = kBytes / 4;
  args.chunkBytes = kBytes;  // one chunk per ring step: all ranks start and end each step at once
  auto time = [&](const char* algo, std::vector<std::pair<int, double>> busy) {
    const algo::AlgoInfo* a = algo::findAlgo(sched::CollType::kAllReduce, algo);
    EXPECT_NE(a, nullptr);
    ScheduleSet set(p);
    EXPECT_TRUE(buildScheduleSet(a->build, args, p, std::vector<int>(p, 0), &set).ok());
    SimOptions o = options(false);
    o.recvReduceCoreGBps = 4;
    o.busySlowdown = busy;
    return run(*net, set, o);
  };
  const double ring = time("ring", {}), tree = time("tree", {});
  EXPECT_NEAR(time("ring", {{4, 1.2}, {8, 1.6}}), 1.6 * ring, 1e-9 * ring);
  const double treeBusy = time("tree", {{4, 1.2}, {8, 1.6}});
  EXPECT_GT(treeBusy, tree);
  EXPECT_LT(treeBusy / tree, 1.6 - 0.05);
  // Slowdown 1 everywhere: the same answer as off (the run is just not folded).
  EXPECT_NEAR(time("ring", {{4, 1.0}, {8, 1.0}}), ring, 1e-12 * ring);
  EXPECT_NEAR(time("tree", {{4, 1.0}, {8, 1.0}}), tree, 1e-12 * tree);
}

TEST(SimBusy, BadInputIsRejectedNamingTheOption) {
  auto net = oneHost(4);
  const ScheduleSet set = reduceOnly({kBytes, kBytes, kBytes, kBytes});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const std::vector<std::pair<int, double>>& bad :
       std::vector<std::vector<std::pair<int, double>>>{{{2, 1.5}},
                                                        {{8, 1.5}, {4, 1.2}},
                                                        {{4, 0}},
                                                        {{4, -1}},
                                                        {{4, nan}},
                                                        {{4, 1.2}, {4, 1.3}}}) {
    SimOptions o = options(false);
    o.busySlowdown = bad;
    SimResult res;
    Status s = simulate(*net, set, {}, o, &res);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.toString();
    EXPECT_NE(s.message().find("busySlowdown"), std::string::npos) << s.toString();
  }
  SimOptions noCores = options(true);
  noCores.hostCores = 0;
  SimResult res;
  Status s = simulate(*net, set, {}, noCores, &res);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("busySlowdown"), std::string::npos) << s.toString();
  SimOptions demandOnly = options(false);
  demandOnly.busyByDemand = true;
  s = simulate(*net, set, {}, demandOnly, &res);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("busyByDemand"), std::string::npos) << s.toString();
  std::vector<std::pair<int, double>> pts;
  EXPECT_TRUE(parseBusySlowdown("4:1.28,8:1.6", "--x", &pts).ok());
  ASSERT_EQ(pts.size(), 2u);
  EXPECT_EQ(pts[1].first, 8);
  EXPECT_DOUBLE_EQ(pts[1].second, 1.6);
  EXPECT_TRUE(parseBusySlowdown("", "--x", &pts).ok());
  EXPECT_TRUE(pts.empty());
  for (const char* text : {"4", "4:", ":1.2", "4:1.2x", "a:1", "4:1.2,,8:1"}) {
    Status p = parseBusySlowdown(text, "--sim-busy-slowdown", &pts);
    EXPECT_EQ(p.code(), Code::kInvalidArgument) << text;
    EXPECT_NE(p.message().find("--sim-busy-slowdown"), std::string::npos) << p.toString();
  }
}

}  // namespace
}  // namespace loom::sim
