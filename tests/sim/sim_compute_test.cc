// Compute as a shared resource (SimOptions::computeShared): reductions and copies share a rank's
// core, ranks share a host's cores max-min fairly (as flows share a link), and transfers the CPUs
// perform cross the same cores. Each case is priced against the closed form a user would write
// down, and folded runs equal unfolded ones.
#include <gtest/gtest.h>

#include <cmath>

#include "algo/registry.h"
#include "sim/engine.h"
#include "sim/from_topology.h"
#include "sim/local_host.h"
#include "sim/schedule_set.h"
#include "sim_compute_util.h"
#include "topo/synth/synth.h"

namespace loom::sim {
namespace {

using testing::oneHost;
using testing::reduceOnly;
using testing::run;

constexpr uint64_t kBytes = 8 << 20;

SimOptions computeOptions(double reduceGBps, double hostCores) {
  SimOptions o;
  o.computeShared = true;
  o.reduceGBps = reduceGBps;
  o.copyGBps = 2 * reduceGBps;
  o.hostCores = hostCores;
  o.latNvlinkUs = o.latPcieUs = o.latNetUs = 0;
  o.latHopUs = 0;
  return o;
}

// Four ranks reducing 8 MiB each on two cores: two ranks per core, each at half speed, so twice
// the time one rank takes alone; with four cores (or no host limit) the one-rank time.
TEST(SimCompute, TwoRanksPerCoreReduceAtHalfSpeed) {
  auto net = oneHost(4);
  const double r = 5e9;
  const ScheduleSet set = reduceOnly({kBytes, kBytes, kBytes, kBytes});
  EXPECT_NEAR(run(*net, set, computeOptions(5, 2)), 2 * kBytes / r, 1e-9);
  EXPECT_NEAR(run(*net, set, computeOptions(5, 4)), kBytes / r, 1e-9);
  EXPECT_NEAR(run(*net, set, computeOptions(5, 0)), kBytes / r, 1e-9);
  SimOptions off = computeOptions(5, 2);
  off.computeShared = false;  // the old model: no contention
  EXPECT_NEAR(run(*net, set, off), kBytes / r, 1e-9);
}

// Max-min over cores: ranks 0, 1 reduce S, ranks 2, 3 reduce 2S on two cores. All four run at
// half a core until 0 and 1 finish (S at r/2: 2S/r); then 2 and 3 have a core each for their
// remaining S: 3S/r in all. A static share (r/2 each throughout) would say 4S/r.
TEST(SimCompute, FreedCoresGoToTheRanksStillReducing) {
  auto net = oneHost(4);
  const double r = 5e9;
  const ScheduleSet set = reduceOnly({kBytes, kBytes, 2 * kBytes, 2 * kBytes});
  EXPECT_NEAR(run(*net, set, computeOptions(5, 2)), 3 * kBytes / r, 1e-9);
}

// A tree node reducing two children's chunks at once: the two reductions share its core, so both
// end after transfer + 2 S / r (not transfer + S / r as with independent reductions).
TEST(SimCompute, ParentReducingTwoChildrenSharesItsCore) {
  auto net = oneHost(3);
  ScheduleSet set(3);
  for (int r = 0; r < 3; ++r) {
    sched::Schedule s;
    s.rank = r;
    s.nranks = 3;
    if (r == 0) {
      s.recvReduce(1, {sched::kBufSend, 0}, {sched::kBufRecv, 0}, kBytes);
      s.recvReduce(2, {sched::kBufSend, 0}, {sched::kBufRecv, 0}, kBytes);
    } else {
      s.send(0, {sched::kBufSend, 0}, kBytes);
    }
    ASSERT_TRUE(set.add(s).ok());
  }
  // Both transfers enter rank 0 over its one link (1000 GB/s): 2 S / 1000 GB/s, then 2 S / r.
  const double transfer = 2 * kBytes / 1000e9, r = 5e9;
  EXPECT_NEAR(run(*net, set, computeOptions(5, 0)), transfer + 2 * kBytes / r, 1e-9);
  SimOptions off = computeOptions(5, 0);
  off.computeShared = false;
  EXPECT_NEAR(run(*net, set, off), transfer + kBytes / r, 1e-9);
}

// Transfers the CPUs perform: two ranks that each send and receive S at once, a byte costing
// 1/(2F) core-ns on each side, move at F each (the calibration case); one rank sending alone
// moves at 2F. A reducing receive that reduces on the way costs its receiver 1/G instead of
// 1/(2F): both directions at 1 / (1/(2F) + 1/G).
TEST(SimCompute, CpuTransfersShareTheCores) {
  auto net = oneHost(2);
  const double f = 3;  // GB/s
  SimOptions o = computeOptions(5, 2);
  o.sendCoreGBps = o.recvCoreGBps = 2 * f;
  auto exchange = [](bool reduce, bool both) {
    ScheduleSet set(2);
    for (int r = 0; r < 2; ++r) {
      sched::Schedule s;
      s.rank = r;
      s.nranks = 2;
      if (both || r == 0) s.send(1 - r, {sched::kBufSend, 0}, kBytes);
      if (both || r == 1) {
        if (reduce)
          s.recvReduce(1 - r, {sched::kBufSend, 0}, {sched::kBufRecv, 0}, kBytes);
        else
          s.recv(1 - r, {sched::kBufRecv, 0}, kBytes);
      }
      EXPECT_TRUE(set.add(s).ok());
    }
    return set;
  };
  EXPECT_NEAR(run(*net, exchange(false, true), o), kBytes / (f * 1e9), 1e-9);
  EXPECT_NEAR(run(*net, exchange(false, false), o), kBytes / (2 * f * 1e9), 1e-9);
  // Not fused: the transfer at F, then the reduction at 5 GB/s.
  EXPECT_NEAR(run(*net, exchange(true, true), o), kBytes / (f * 1e9) + kBytes / 5e9, 1e-9);
  o.recvReduceCoreGBps = 4;
  const double fused = 1.0 / (1.0 / (2 * f) + 1.0 / 4) * 1e9;
  EXPECT_NEAR(run(*net, exchange(true, true), o), kBytes / fused, 1e-9);
  // A pair limit under what the cores allow: each direction at the pair's rate.
  o.pairGBps = 1;
  EXPECT_NEAR(run(*net, exchange(true, true), o), kBytes / 1e9, 1e-9);
}

// A ring of 8 ranks on 2 cores with CPU transfers: every rank sends and reduce-receives S/8 per
// step, 8 ranks share 2 cores, so each step takes 4 x (S/8) / rate of one core-saturated rank.
TEST(SimCompute, RingOnOversubscribedHostMatchesClosedForm) {
  const int p = 8;
  auto net = oneHost(p);
  const double f = 3, g = 4;
  SimOptions o = computeOptions(5, 2);
  o.sendCoreGBps = o.recvCoreGBps = 2 * f;
  o.recvReduceCoreGBps = g;
  const algo::AlgoInfo* a = algo::findAlgo(sched::CollType::kAllReduce, "ring");
  ASSERT_NE(a, nullptr);
  sched::CollArgs args;
  args.count = kBytes / 4;
  args.chunkBytes = kBytes;  // one chunk per step
  ScheduleSet set(p);
  ASSERT_TRUE(buildScheduleSet(a->build, args, p, std::vector<int>(p, 0), &set).ok());
  const double block = static_cast<double>(kBytes) / p, share = 2.0 / p;  // cores per rank
  const double rs = block / (share / (1 / (2 * f) + 1 / g) * 1e9);
  const double ag = block / (share * f * 1e9);
  SimResult res;
  ASSERT_TRUE(simulate(*net, set, {}, o, &res).ok());
  EXPECT_NEAR(res.seconds, (p - 1) * (rs + ag), 1e-6 * res.seconds);
}

// The all-reduce `name` of kBytes on p ranks of one host, one chunk per step, in or out of place.
Status oneChunkAllReduce(const char* name, int p, bool inPlace, ScheduleSet* set) {
  const algo::AlgoInfo* a = algo::findAlgo(sched::CollType::kAllReduce, name);
  if (a == nullptr) return invalidArgument("no all-reduce algorithm ", name);
  sched::CollArgs args;
  args.count = kBytes / 4;
  args.chunkBytes = kBytes;
  args.inPlace = inPlace;
  return buildScheduleSet(a->build, args, p, std::vector<int>(p, 0), set);
}

// In place (CollArgs::inPlace), every reduce-scatter step reduces into the operand it read, so
// the receiver pays the in-place rate (recvReduceInPlaceCoreGBps) instead: the closed form above
// with g' for g. Out of place the ring's reductions read the send buffer and write the receive
// buffer, three operands, and the in-place rate does not apply.
TEST(SimCompute, RingInPlaceReducesAtTheInPlaceRate) {
  const int p = 8;
  auto net = oneHost(p);
  const double f = 3, g = 4, gIp = 7;
  SimOptions o = computeOptions(5, 2);
  o.sendCoreGBps = o.recvCoreGBps = 2 * f;
  o.recvReduceCoreGBps = g;
  o.recvReduceInPlaceCoreGBps = gIp;
  const double block = static_cast<double>(kBytes) / p, share = 2.0 / p;
  const double ag = block / (share * f * 1e9);
  for (bool inPlace : {false, true}) {
    ScheduleSet set(p);
    ASSERT_TRUE(oneChunkAllReduce("ring", p, inPlace, &set).ok());
    const double rs = block / (share / (1 / (2 * f) + 1 / (inPlace ? gIp : g)) * 1e9);
    SimResult res;
    ASSERT_TRUE(simulate(*net, set, {}, o, &res).ok());
    EXPECT_NEAR(res.seconds, (p - 1) * (rs + ag), 1e-6 * res.seconds) << "inPlace " << inPlace;
  }
}

// SimOptions::pairCopyGBps: a receive that reduces as it drains its pair holds the pair's link
// 1 / (its reduction rate) - 1 / pairCopyGBps longer per byte than a copying one. The 2-rank ring
// on 2 cores, pairs at 2.5 GB/s (under what a core allows: the pair is the limit), cores 6 GB/s
// per side, reductions on receipt 8 GB/s (in place 16), copies 16: out of place the reduce-scatter
// step's pair costs 1/2.5 + 1/8 - 1/16 ns per byte, in place (a copy's rate) and with no copy rate
// 1/2.5; the all-gather step 1/2.5 either way.
TEST(SimCompute, ReducingReceiveHoldsThePairLonger) {
  const int p = 2;
  auto net = oneHost(p);
  SimOptions o = computeOptions(5, 2);
  o.sendCoreGBps = o.recvCoreGBps = 6;
  o.recvReduceCoreGBps = 8;
  o.recvReduceInPlaceCoreGBps = 16;
  o.pairGBps = 2.5;
  const double block = static_cast<double>(kBytes) / p, pair = block / 2.5e9;
  struct Case {
    bool inPlace;
    double copy, rsNsPerByte;
  };
  for (const Case& c : {Case{false, 0, 1 / 2.5}, Case{false, 16, 1 / 2.5 + 1.0 / 8 - 1.0 / 16},
                        Case{true, 16, 1 / 2.5}, Case{false, 4, 1 / 2.5}}) {
    o.pairCopyGBps = c.copy;
    ScheduleSet set(p);
    ASSERT_TRUE(oneChunkAllReduce("ring", p, c.inPlace, &set).ok());
    SimResult res;
    ASSERT_TRUE(simulate(*net, set, {}, o, &res).ok());
    const double expect = block * c.rsNsPerByte / 1e9 + pair;
    EXPECT_NEAR(res.seconds, expect, 1e-6 * expect)
        << "inPlace " << c.inPlace << ", pairCopyGBps " << c.copy;
  }
  o.pairCopyGBps = -1;
  ScheduleSet set(p);
  ASSERT_TRUE(oneChunkAllReduce("ring", p, false, &set).ok());
  SimResult res;
  const Status st = simulate(*net, set, {}, o, &res);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("pairCopyGBps"), std::string::npos) << st.message();
}

// Which reductions a schedule runs in place (SimStep::inPlace): none of the out-of-place ring's;
// all of the in-place ring's; Rabenseifner out of place reduces its first halving step from the
// send buffer into the receive buffer and the later ones in the receive buffer, in place.
TEST(SimCompute, ScheduleSetMarksInPlaceReductions) {
  const int p = 4;
  auto counts = [&](const char* name, bool inPlace, int* reduces, int* inPlaceReduces) {
    ScheduleSet set(p);
    ASSERT_TRUE(oneChunkAllReduce(name, p, inPlace, &set).ok());
    EXPECT_EQ(set.callInPlace, inPlace);
    *reduces = *inPlaceReduces = 0;
    for (const SimStep& st : set.shapeOfRank(1).steps) {
      *reduces += st.op == sched::OpKind::kRecvReduce;
      *inPlaceReduces += st.op == sched::OpKind::kRecvReduce && st.inPlace;
    }
  };
  int n = 0, ip = 0;
  counts("ring", false, &n, &ip);
  EXPECT_EQ(n, p - 1);
  EXPECT_EQ(ip, 0);
  counts("ring", true, &n, &ip);
  EXPECT_EQ(ip, p - 1);
  counts("rabenseifner", false, &n, &ip);
  EXPECT_EQ(n, 2);  // log2(4) halving steps
  EXPECT_EQ(ip, 1);
  counts("rabenseifner", true, &n, &ip);
  EXPECT_EQ(ip, 2);
}

double relDiff(double a, double b) {
  double m = std::max(std::fabs(a), std::fabs(b));
  return m > 0 ? std::fabs(a - b) / m : 0.0;
}

// Folding stays exact with compute shared: class core links stand for each member's core, a
// host's core link gets all of a class's members on it.
TEST(SimCompute, FoldedEqualsUnfolded) {
  struct Case {
    int hosts, perHost;
    const char* algo;
    bool folds;  // enough symmetry to fold (else the case checks the fallback)
  };
  for (const Case& c :
       {Case{1, 8, "ring", true}, Case{1, 16, "ring", true}, Case{2, 8, "ring", false},
        Case{4, 8, "ring", true}, Case{4, 8, "hier", true}, Case{8, 4, "hier", true},
        Case{4, 4, "rabenseifner", false}, Case{1, 16, "tree", false}}) {
    const int p = c.hosts * c.perHost;
    auto net = oneHost(c.perHost, c.hosts);
    SimOptions o = computeOptions(5, 2);
    o.sendCoreGBps = o.recvCoreGBps = 6;
    o.recvReduceCoreGBps = 4;
    o.pairGBps = 2.5;
    o.latNvlinkUs = 2;
    o.latNetUs = 10;
    const algo::AlgoInfo* a = algo::findAlgo(sched::CollType::kAllReduce, c.algo);
    ASSERT_NE(a, nullptr);
    sched::CollArgs args;
    args.count = kBytes / 4;
    args.chunkBytes = 256 << 10;
    std::vector<int> hostOf(p);
    for (int r = 0; r < p; ++r) hostOf[r] = r / c.perHost;
    ScheduleSet set(p);
    ASSERT_TRUE(buildScheduleSet(a->build, args, p, hostOf, &set).ok());
    SimResult folded, plain;
    o.fold = true;
    ASSERT_TRUE(simulate(*net, set, {}, o, &folded).ok());
    o.fold = false;
    ASSERT_TRUE(simulate(*net, set, {}, o, &plain).ok());
    const std::string what = strCat(c.algo, " ", c.hosts, "x", c.perHost, ": ", folded.foldNote);
    EXPECT_LE(relDiff(folded.seconds, plain.seconds), 1e-9) << what;
    for (int r = 0; r < p; ++r)
      EXPECT_LE(relDiff(folded.rankSeconds[r], plain.rankSeconds[r]), 1e-9) << what;
    if (c.folds) {
      EXPECT_GT(folded.foldClasses, 0) << what;
    }
  }
}

// The same on a rail-optimised fat-tree (8 GPUs per host, spray): reductions slow enough to
// contend, and a host's 8 ranks sharing 4 cores.
TEST(SimCompute, FoldedEqualsUnfoldedOnAFatTree) {
  topo::Topology t;
  ASSERT_TRUE(
      topo::synth::generateFromSpec(
          "fat-tree:levels=2,leavesPerPod=2,spinesPerPod=4,hostsPerLeaf=4,rails=8,speed=NDR", &t)
          .ok());
  Net net{NodeParams()};
  ASSERT_TRUE(netFromTopology(t, &net).ok());
  const int p = net.numGpus();
  std::vector<int> hostOf(p);
  for (int r = 0; r < p; ++r) hostOf[r] = net.hostOfGpu(r);
  for (const char* algo : {"ring", "tree", "hier", "rabenseifner"}) {
    const algo::AlgoInfo* a = algo::findAlgo(sched::CollType::kAllReduce, algo);
    ASSERT_NE(a, nullptr) << algo;
    sched::CollArgs args;
    args.count = kBytes / 4;
    args.chunkBytes = 256 << 10;
    ScheduleSet set(p);
    ASSERT_TRUE(buildScheduleSet(a->build, args, p, hostOf, &set).ok());
    SimOptions o;
    o.computeShared = true;
    o.reduceGBps = 20;
    o.hostCores = 4;
    o.foldMinMembers = 2;
    SimResult folded, plain;
    ASSERT_TRUE(simulate(net, set, {}, o, &folded).ok());
    o.fold = false;
    ASSERT_TRUE(simulate(net, set, {}, o, &plain).ok());
    EXPECT_LE(relDiff(folded.seconds, plain.seconds), 1e-9) << algo << ": " << folded.foldNote;
    for (int r = 0; r < p; ++r)
      EXPECT_LE(relDiff(folded.rankSeconds[r], plain.rankSeconds[r]), 1e-9) << algo;
    if (std::string(algo) == "ring" || std::string(algo) == "hier") {
      EXPECT_GT(folded.foldClasses, 0) << algo << ": " << folded.foldNote;
    }
    EXPECT_GT(plain.computeFlows, 0u) << algo;
  }
}

}  // namespace
}  // namespace loom::sim
