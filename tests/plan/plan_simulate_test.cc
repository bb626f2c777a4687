// loom-plan --simulate: the planner consults the flow-level simulator where its cost model is
// unsure, decides by simulated time there, and leaves sure cases alone; the local-machine model
// (ranks as processes sharing cores) gives the textbook ring time.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "plan/planner.h"
#include "tools/loom-plan/simulate.h"
#include "topo/classify.h"
#include "topo/synth/synth.h"

namespace loom::plan {
namespace {

sched::CollArgs allreduce(uint64_t bytes) {
  sched::CollArgs a;
  a.coll = sched::CollType::kAllReduce;
  a.dtype = DataType::kFloat32;
  a.count = bytes / 4;
  return a;
}

// Fat-tree 2:1 (4 leaves x 4 hosts, 2 spines), ranks scattered round-robin over the leaves: a
// rank-order ring crosses a leaf's uplinks on every hop (the planner_test fixture).
struct Oversubscribed {
  topo::Topology t;
  PlannerContext ctx;
  std::unique_ptr<Planner> planner;
  loomplan::SimulateSetup setup;
  Oversubscribed() {
    topo::synth::FatTreeParams fp;
    fp.leavesPerPod = 4;
    fp.spinesPerPod = 2;
    fp.hostsPerLeaf = 4;
    EXPECT_TRUE(topo::synth::generateFatTree(fp, &t).ok());
    topo::classify(&t);
    ctx.nranks = 16;
    for (int r = 0; r < 16; ++r) ctx.hostOf.push_back((r % 4) * 4 + r / 4);
    ctx.interHost = Transport::kNet;
    ctx.topology = &t;
    ctx.readEnv = false;
    ctx.params.reduceGBps = 500;
    planner = std::make_unique<Planner>(ctx);
    setup.topology = &t;
    setup.hosts = 16;
    setup.perHost = 1;
    setup.nranks = 16;
    setup.hostOf = ctx.hostOf;
    setup.interHost = ctx.interHost;
    setup.params = ctx.params;
  }
};

TEST(PlanSimulate, UnsureOnOversubscribedFabricDecidesBySimulatedTime) {
  Oversubscribed f;
  loomplan::PlanSimulator ps(f.planner.get(), f.setup);
  ASSERT_TRUE(ps.init().ok());
  const sched::CollArgs a = allreduce(64 << 20);
  loomplan::SimulatedRow row;
  ASSERT_TRUE(ps.row(a, &row).ok());
  EXPECT_TRUE(row.consulted) << row.why;
  EXPECT_NE(row.why, "sure");
  ASSERT_GE(row.sims.size(), 2u);
  const loomplan::SimulatedCandidate* least = nullptr;
  for (const auto& c : row.sims) {
    EXPECT_GT(c.simSec, 0) << c.d.describe() << " " << c.skipped;
    if (!least || c.simSec < least->simSec) least = &c;
  }
  // The model's own choice is among the simulated, and the decision is the least simulated time.
  EXPECT_EQ(row.sims[0].d.describe(), row.model.describe());
  EXPECT_EQ(row.by, "simulator");
  EXPECT_EQ(row.decision.describe(), least->d.describe());
  EXPECT_DOUBLE_EQ(row.decisionSimSec, least->simSec);
}

TEST(PlanSimulate, TableListsSimulatedTimes) {
  Oversubscribed f;
  testing::internal::CaptureStdout();
  int rc = loomplan::simulateMain(f.planner.get(), f.setup, allreduce(0), 16 << 20, 64 << 20,
                                  [](uint64_t b) { return b / 4; });
  std::string out = testing::internal::GetCapturedStdout();
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("# simulator: the topology's fabric"), std::string::npos) << out;
  for (const char* size : {"16M", "32M", "64M"})
    EXPECT_NE(out.find(std::string("     ") + size + " | "), std::string::npos) << out;
  EXPECT_NE(out.find("simulator ("), std::string::npos) << out;
  EXPECT_NE(out.find("   ~ "), std::string::npos) << out;
}

// p ranks, each its own host, over tcp (loom's runs under LOOM_TRANSPORT=tcp, or a flat tcp
// network); `algo` forced where given (LOOM_ALGO's form), `params` the cost parameters where given.
struct OwnHostsTcp {
  PlannerContext ctx;
  std::unique_ptr<Planner> planner;
  loomplan::SimulateSetup setup;
  explicit OwnHostsTcp(int p, const char* algo = nullptr, const char* params = nullptr) {
    ctx.nranks = p;
    for (int r = 0; r < p; ++r) ctx.hostOf.push_back(r);
    ctx.interHost = Transport::kTcp;
    ctx.readEnv = false;
    if (algo != nullptr) ctx.algo = algo;
    if (params != nullptr) EXPECT_TRUE(CostParams::parse(params, &ctx.params).ok());
    planner = std::make_unique<Planner>(ctx);
    setup.hosts = p;
    setup.nranks = p;
    setup.hostOf = ctx.hostOf;
    setup.interHost = ctx.interHost;
    setup.params = ctx.params;
  }
};

TEST(PlanSimulate, SureCaseDoesNotConsultTheSimulator) {
  // Flat tcp network, 4 hosts, 8 bytes: recursive doubling (2 messages) is far ahead of every
  // other algorithm and no resource is shared.
  OwnHostsTcp f(4);
  loomplan::PlanSimulator ps(f.planner.get(), f.setup);
  ASSERT_TRUE(ps.init().ok());
  loomplan::SimulatedRow row;
  ASSERT_TRUE(ps.row(allreduce(8), &row).ok());
  EXPECT_FALSE(row.consulted);
  EXPECT_EQ(row.why, "sure");
  EXPECT_TRUE(row.sims.empty());
  EXPECT_EQ(row.by, "model");
  EXPECT_EQ(row.decision.describe(), row.model.describe());
}

TEST(PlanSimulate, OverBudgetLeavesTheDecisionToTheModel) {
  Oversubscribed f;
  f.setup.opt.flowBudget = 10;
  loomplan::PlanSimulator ps(f.planner.get(), f.setup);
  ASSERT_TRUE(ps.init().ok());
  loomplan::SimulatedRow row;
  ASSERT_TRUE(ps.row(allreduce(64 << 20), &row).ok());
  ASSERT_FALSE(row.sims.empty());
  for (const auto& c : row.sims) {
    EXPECT_LT(c.simSec, 0);
    EXPECT_NE(c.skipped.find("over budget"), std::string::npos) << c.skipped;
  }
  EXPECT_EQ(row.by, "model (simulator over budget)");
  EXPECT_EQ(row.decision.describe(), row.model.describe());
}

// p shm ranks on one machine of 2 cores, `algo` forced (LOOM_ALGO's form), 6 GB/s pairs and
// nearly free latency and reductions.
struct OneMachine {
  PlannerContext ctx;
  std::unique_ptr<Planner> planner;
  loomplan::SimulateSetup setup;
  OneMachine(int p, const char* algo) {
    ctx.nranks = p;
    ctx.hostOf.assign(p, 0);
    ctx.readEnv = false;
    ctx.algo = algo;
    EXPECT_TRUE(
        CostParams::parse("shmAlphaUs=0.001,shmGBps=6,hostMemGBps=100,reduceGBps=1e6", &ctx.params)
            .ok());
    planner = std::make_unique<Planner>(ctx);
    setup.perHost = p;
    setup.nranks = p;
    setup.hostOf = ctx.hostOf;
    setup.params = ctx.params;
    setup.opt.localCores = 2;
  }
};

// One machine with 2 cores shared by p ranks: a byte sent or received costs a core 1 / (2 x 6
// GB/s), a pair moves at most 6 GB/s. With reductions and latency made negligible, a reduce-scatter
// step (each rank sends S/p and reduces S/p on receipt, nearly free) moves each flow at min(6,
// 24/p) GB/s, an all-gather step (send and receive) at min(6, 12/p): p - 1 steps of each.
TEST(PlanSimulate, LocalMachineSharesCoresAmongRanks) {
  for (int p : {2, 4, 8}) {
    OneMachine m(p, "allreduce:ring");
    loomplan::PlanSimulator ps(m.planner.get(), m.setup);
    ASSERT_TRUE(ps.init().ok());
    const uint64_t bytes = 16 << 20;
    loomplan::SimulatedRow row;
    ASSERT_TRUE(ps.row(allreduce(bytes), &row).ok());
    EXPECT_EQ(row.by, "forced");
    const double block = static_cast<double>(bytes) / p;
    const double expect =
        (p - 1) * (block / std::min(6e9, 24e9 / p) + block / std::min(6e9, 12e9 / p));
    EXPECT_NEAR(row.decisionSimSec, expect, 0.02 * expect) << "p=" << p;
  }
}

// A schedule's local Copy (the all-gather's own block into the output) costs a core
// bytes / --sim-copy-gbps, not the transfer rate: with copies made 100x dearer than anything
// else, the 4-rank all-gather takes as long as 4 ranks' copies on 2 cores.
TEST(PlanSimulate, LocalCopyRunsAtTheCopyRate) {
  OneMachine m(4, "allgather:ring");
  loomplan::SimulateSetup& s = m.setup;
  Planner& pl = *m.planner;
  s.opt.coreGBps = 1e4;
  const uint64_t block = 4 << 20;
  sched::CollArgs a;
  a.coll = sched::CollType::kAllGather;
  a.dtype = DataType::kFloat32;
  a.count = block / 4;
  for (double copy : {0.0, 0.1}) {
    s.opt.copyGBps = copy;
    loomplan::PlanSimulator ps(&pl, s);
    ASSERT_TRUE(ps.init().ok());
    loomplan::SimulatedRow row;
    ASSERT_TRUE(ps.row(a, &row).ok());
    // Default: copies at the core rate, the three ring steps at the pair rate dominate.
    const double expect = copy > 0 ? 2 * block / (copy * 1e9) : 3 * block / 6e9;
    EXPECT_NEAR(row.decisionSimSec, expect, 0.03 * expect) << "copy " << copy;
  }
  s.opt.copyGBps = -1;
  loomplan::PlanSimulator bad(&pl, s);
  Status st = bad.init();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--sim-copy-gbps"), std::string::npos) << st.message();
}

// --sim-in-place simulates the in-place call and --sim-reduce-ip-gbps prices its reductions
// (local operand = destination): with reductions the only real cost, the 2-rank ring's one
// reduce-scatter step takes (S/2) / the in-place rate in place and / reduceGBps out of place
// (the ring's out-of-place reductions read the send buffer and write the receive buffer).
TEST(PlanSimulate, InPlaceReductionsRunAtTheInPlaceRate) {
  OneMachine m(2, "allreduce:ring");
  loomplan::SimulateSetup& s = m.setup;
  s.params.reduceGBps = 0.01;
  s.opt.coreGBps = 1e4;
  const uint64_t bytes = 4 << 20;
  sched::CollArgs a;
  a.coll = sched::CollType::kAllReduce;
  a.dtype = DataType::kFloat32;
  a.count = bytes / 4;
  struct Case {
    bool inPlace;
    double ipGBps, reduceGBps;
  };
  for (const Case& c : {Case{false, 0.04, 0.01}, Case{true, 0, 0.01}, Case{true, 0.04, 0.04}}) {
    s.opt.inPlace = c.inPlace;
    s.opt.reduceIpGBps = c.ipGBps;
    loomplan::PlanSimulator ps(m.planner.get(), s);
    ASSERT_TRUE(ps.init().ok());
    loomplan::SimulatedRow row;
    ASSERT_TRUE(ps.row(a, &row).ok());
    const double expect = bytes / 2 / (c.reduceGBps * 1e9) + bytes / 2 / 6e9;
    EXPECT_NEAR(row.decisionSimSec, expect, 0.03 * expect)
        << "in place " << c.inPlace << ", --sim-reduce-ip-gbps " << c.ipGBps;
  }
  s.opt.reduceIpGBps = -1;
  loomplan::PlanSimulator bad(m.planner.get(), s);
  Status st = bad.init();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--sim-reduce-ip-gbps"), std::string::npos) << st.message();
}

// --sim-pair-copy-gbps: over shm a receive that reduces out of the pair ring holds the pair's
// handoff 1 / reduceGBps - 1 / the copy rate longer per byte. 2 ranks on 2 cores, pairs at 6 GB/s,
// a core 12 GB/s per side, reductions 10 GB/s, copies 20: the reduce-scatter step's pair costs
// 1/6 + 1/10 - 1/20 ns per byte (4.62 GB/s, under the core's 1 / (1/12 + 1/10) = 5.45), the
// all-gather step's 1/6. Over tcp (each rank its own host, loopback) it is not applied: the
// receiver reduces from its staging after the socket's receive, outside the handoff.
TEST(PlanSimulate, ReducingReceiveHoldsTheShmPairLonger) {
  OneMachine m(2, "allreduce:ring");
  loomplan::SimulateSetup& s = m.setup;
  s.params.reduceGBps = 10;
  const uint64_t bytes = 16 << 20;
  const double half = bytes / 2.0;
  auto simulated = [&](loomplan::SimulateSetup& setup, Planner* pl, double copy) {
    setup.opt.pairCopyGBps = copy;
    loomplan::PlanSimulator ps(pl, setup);
    EXPECT_TRUE(ps.init().ok());
    loomplan::SimulatedRow row;
    EXPECT_TRUE(ps.row(allreduce(bytes), &row).ok());
    return row.decisionSimSec;
  };
  const double plain = half / (1 / (1.0 / 12 + 1.0 / 10) * 1e9) + half / 6e9;
  EXPECT_NEAR(simulated(s, m.planner.get(), 0), plain, 0.01 * plain);
  const double held = half * (1.0 / 6 + 1.0 / 10 - 1.0 / 20) / 1e9 + half / 6e9;
  EXPECT_NEAR(simulated(s, m.planner.get(), 20), held, 0.01 * held);
  // A copy slower than the reduction (or an in-place reduction at a copy's rate) adds nothing.
  EXPECT_NEAR(simulated(s, m.planner.get(), 5), plain, 0.01 * plain);

  OwnHostsTcp t(2, "allreduce:ring", "tcpAlphaUs=0.001,tcpGBps=6,hostMemGBps=100,reduceGBps=10");
  t.setup.opt.localCores = 2;
  const double viaTcp = simulated(t.setup, t.planner.get(), 0);
  EXPECT_GT(viaTcp, 0);
  EXPECT_DOUBLE_EQ(simulated(t.setup, t.planner.get(), 20), viaTcp);

  s.opt.pairCopyGBps = -1;
  loomplan::PlanSimulator bad(m.planner.get(), s);
  Status st = bad.init();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--sim-pair-copy-gbps"), std::string::npos) << st.message();
  s.opt.pairCopyGBps = 20;
  s.opt.localCores = 0;
  loomplan::PlanSimulator noCores(m.planner.get(), s);
  st = noCores.init();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("needs --sim-cores"), std::string::npos) << st.message();
}

TEST(PlanSimulate, BadOptionsAreErrors) {
  Oversubscribed f;
  f.setup.opt.top = 0;
  loomplan::PlanSimulator ps(f.planner.get(), f.setup);
  Status s = ps.init();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--sim-top"), std::string::npos) << s.message();
  // Cores given but ranks spread over some (not one, not all-separate) hosts.
  f.setup.opt = loomplan::SimulateOptions();
  f.setup.opt.localCores = 2;
  f.setup.perHost = 2;
  f.setup.hostOf.assign(16, 0);
  f.setup.hostOf[15] = 1;
  loomplan::PlanSimulator ps2(f.planner.get(), f.setup);
  s = ps2.init();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--sim-cores"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace loom::plan
