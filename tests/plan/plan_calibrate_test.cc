// loom-plan --calibrate recovers a known machine: --measure lines made from a cost model with
// two-level shm latency, a cache-dependent shm rate and per-algorithm terms are fitted back (link
// terms, fits, tuning table), and the fitted model predicts every point.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/params.h"
#include "plan/planner.h"
#include "tools/loom-plan/calibrate.h"

namespace loom::plan {
namespace {

CostParams truth() {
  CostParams p;
  p.cores = static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN));
  p.reduceGBps = 10;
  p.shmAlphaUs = 2, p.shmGBps = 2, p.hostMemGBps = 2 * p.cores;
  p.shmEagerBytes = 1024, p.shmBigAlphaUs = 3, p.shmCacheBytes = 131072, p.shmCacheGBps = 6;
  p.tcpAlphaUs = 15, p.tcpGBps = 1.5;
  // Over tcp a message's latency is waiting, not CPU work of the shared cores (shm: CPU work).
  p.tcpAlphaCpu = 0;
  // rd carries no terms of its own (its two-rank runs give the link terms); the others do.
  const std::map<std::string, AlgoFit> own = {{"ring", {1, 0.5, 2, 1.2}},
                                              {"tree", {3, 0.2, 1, 0.9}},
                                              {"rabenseifner", {0, 1.0, 3, 1.5}},
                                              {"hier", {2, 0.4, 0.5, 1.1}},
                                              {"hier_tree", {0.5, 0.6, 1.5, 1.0}}};
  for (const char* tr : {"shm", "tcp"})
    for (const auto& [algo, f] : own) p.fits[algo + "." + tr] = f;
  p.fits["direct.shm"] = {0.5, 0.3, 0.2, 1};
  return p;
}

PlannerContext shape(const CostParams& params, int ranks, const std::string& tr) {
  PlannerContext c;
  c.nranks = ranks;
  for (int r = 0; r < ranks; ++r) c.hostOf.push_back(tr == "tcp" ? r : 0);
  c.params = params;
  c.readEnv = false;
  c.directBytes = tr == "shm" ? 32768 : 0;
  return c;
}

// The time of every algorithm forced (and the direct path) under `params`, as --measure prints it.
std::map<std::string, double> timesOf(const CostParams& params, int ranks, const std::string& tr,
                                      uint64_t bytes) {
  std::map<std::string, double> us;
  for (const algo::AlgoInfo* a : algo::algosFor(sched::CollType::kAllReduce)) {
    PlannerContext c = shape(params, ranks, tr);
    c.algo = std::string("allreduce:") + a->name;
    Planner pl(c);
    us[a->name] = pl.choose(loomplan::allReduceArgs(bytes)).predictedSec * 1e6;
  }
  if (tr == "shm" && bytes <= 32768)
    us["direct"] = Planner(shape(params, ranks, tr)).model().priceDirect(bytes) * 1e6;
  return us;
}

// --measure lines of the machine `t` (shm and tcp, 2 and 4 ranks, 8 B-2 MiB) into `file`: every
// candidate's median and, when `rounds` is not empty, its rounds (the true time times each
// factor); `want` gets the true times ("shm.2.8" -> algo -> us).
void writeLines(const CostParams& t, const std::string& file, const std::vector<double>& rounds,
                std::map<std::string, std::map<std::string, double>>* want = nullptr) {
  std::ofstream out(file);
  for (const std::string tr : {"shm", "tcp"})
    for (int ranks : {2, 4})
      for (uint64_t b = 8; b <= (2u << 20); b *= 4) {
        const auto us = timesOf(t, ranks, tr, b);
        if (want) (*want)[tr + "." + std::to_string(ranks) + "." + std::to_string(b)] = us;
        out << "{\"transport\":\"" << tr << "\",\"ranks\":" << ranks << ",\"size\":" << b;
        for (const auto& [a, v] : us) {
          out << ",\"" << a << "\":{\"median_us\":" << v;
          if (!rounds.empty()) {
            out << ",\"min_us\":" << v * rounds[0] << ",\"rounds_us\":[";
            for (size_t r = 0; r < rounds.size(); ++r) out << (r ? "," : "") << v * rounds[r];
            out << "]";
          }
          out << "}";
        }
        out << "}\n";
      }
}

TEST(Calibrate, RecoversAKnownMachine) {
  const CostParams t = truth();
  const std::string file = "/tmp/plan_calibrate_test_" + std::to_string(getpid()) + ".jsonl";
  std::map<std::string, std::map<std::string, double>> want;  // "shm.2.8" -> algo -> us
  writeLines(t, file, {}, &want);
  CostParams got;
  ASSERT_TRUE(loomplan::calibrate({file}, &got, false, t.reduceGBps).ok());
  std::remove(file.c_str());
  // The link terms of shm, two-level, as they were.
  EXPECT_NEAR(got.shmAlphaUs, 2, 0.05);
  EXPECT_NEAR(got.shmBigAlphaUs, 3, 0.1);
  EXPECT_EQ(got.shmEagerBytes, 1024);
  EXPECT_EQ(got.shmCacheBytes, 131072);
  EXPECT_NEAR(got.shmCacheGBps, 6, 0.2);
  EXPECT_NEAR(got.shmGBps, 2, 0.05);
  // With fewer cores than the 4-rank points' ranks the latency's CPU share shows, and is found.
  if (got.cores < 4) {
    EXPECT_EQ(got.shmAlphaCpu, 1);
    EXPECT_EQ(got.tcpAlphaCpu, 0);
  }
  // Every point predicted within 2%, and the tuning table names the fastest at every size.
  for (const auto& [key, us] : want) {
    const std::string tr = key.substr(0, 3);
    const int ranks = std::stoi(key.substr(4, 1));
    const uint64_t bytes = std::stoull(key.substr(6));
    CostParams noTable = got;
    noTable.tuned.clear();
    const auto pred = timesOf(noTable, ranks, tr, bytes);
    std::string fastest = us.begin()->first;
    for (const auto& [a, v] : us) {
      EXPECT_NEAR(pred.at(a) / v, 1, 0.02) << key << " " << a;
      if (v < us.at(fastest)) fastest = a;
    }
    const Transport tt = tr == "shm" ? Transport::kShm : Transport::kTcp;
    EXPECT_EQ(got.tunedAlgo(tt, ranks, bytes), fastest) << key;
  }
}

// Several runs pool: a point is the median of every round of every file, so a disturbed run (here
// one whose second round took 4x) cannot decide it alone, and calibrating from two runs gives the
// parameters of one run holding the true times.
TEST(Calibrate, RunsPoolIntoTheMedianOfAllTheirRounds) {
  const CostParams t = truth();
  const std::string base = "/tmp/plan_calibrate_pool_" + std::to_string(getpid());
  writeLines(t, base + "-a.jsonl", {0.9, 1.0, 1.1});
  writeLines(t, base + "-b.jsonl", {1.0, 4.0});
  writeLines(t, base + "-true.jsonl", {});
  CostParams pooled, exact, alone;
  ASSERT_TRUE(
      loomplan::calibrate({base + "-a.jsonl", base + "-b.jsonl"}, &pooled, false, t.reduceGBps)
          .ok());
  ASSERT_TRUE(loomplan::calibrate({base + "-true.jsonl"}, &exact, false, t.reduceGBps).ok());
  ASSERT_TRUE(loomplan::calibrate({base + "-b.jsonl"}, &alone, false, t.reduceGBps).ok());
  for (const char* f : {"-a.jsonl", "-b.jsonl", "-true.jsonl"}) std::remove((base + f).c_str());
  EXPECT_EQ(pooled.toString(), exact.toString());
  EXPECT_NE(alone.toString(), exact.toString());  // run b alone: every point 2.5x
}

// Times that do not grow with the size (a disturbed measurement) fit no link: a clear error that
// names the transport, not a crash or a made-up rate.
TEST(Calibrate, TimesThatShrinkWithTheSizeAreAnErrorNamingTheTransport) {
  const std::string file = "/tmp/plan_calibrate_shrink_" + std::to_string(getpid()) + ".jsonl";
  writeLines(truth(), file, {});
  std::vector<std::string> keep;
  {
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);)
      if (line.find("\"tcp\"") == std::string::npos) keep.push_back(line);
  }
  {
    std::ofstream out(file);
    for (const std::string& l : keep) out << l << "\n";
    double us = 500;
    for (uint64_t b = 8; b <= (2u << 20); b *= 4, us *= 0.8)
      for (int ranks : {2, 4}) {
        out << "{\"transport\":\"tcp\",\"ranks\":" << ranks << ",\"size\":" << b;
        for (const char* a : {"rd", "ring", "tree", "rabenseifner"})
          out << ",\"" << a << "\":{\"median_us\":" << us << "}";
        out << "}\n";
      }
  }
  CostParams got;
  const Status s = loomplan::calibrate({file}, &got, false, 10);
  std::remove(file.c_str());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.toString().find("rd times over tcp fit no positive latency and per-byte cost"),
            std::string::npos)
      << s.toString();
}

// The self-measuring mode end to end, small: every algorithm forced on 2 and 3 forked ranks over
// shm and tcp, 8 B-32 KiB, three rounds (each point their median: with one round, a busy machine
// once measured tcp's 2-rank times shrinking with the size, which no link fits); the fit is saved
// and a planner reading it through LOOM_PLAN_PARAMS=@file (as a communicator does) has the same
// model.
// Real measurements, stored (fixtures/measure-2-3-ranks.jsonl: loom-plan --measure shm|tcp
// --ranks 2|3 --min 8 --max 32k --rounds 3 --forced-only, on a 2-core VM, 2026-12-06): calibrating
// from them gives positive link terms and fits for every algorithm, and the parameters, saved and
// loaded through LOOM_PLAN_PARAMS=@file, make the planner decide exactly as the fitted ones do.
// (The live measurement, `loom-plan --calibrate`, is the perf-labelled test plan_calibrate_live.)
TEST(Calibrate, StoredMeasurementsLoadIntoThePlanner) {
  CostParams got;
  const Status s =
      loomplan::calibrate({std::string(LOOM_PLAN_FIXTURES) + "/measure-2-3-ranks.jsonl"}, &got,
                          false, /*reduceGBps=*/8);
  ASSERT_TRUE(s.ok()) << s.toString();
  EXPECT_EQ(got.reduceGBps, 8);
  EXPECT_GT(got.shmAlphaUs, 0);
  EXPECT_GT(got.tcpAlphaUs, 0);
  EXPECT_GT(got.shmGBps, 0);
  EXPECT_GT(got.tcpGBps, 0);
  for (const char* a : {"ring", "tree", "rabenseifner", "direct"})
    EXPECT_NE(got.fit(a, Transport::kShm), nullptr) << a;
  EXPECT_NE(got.fit("ring", Transport::kTcp), nullptr);
  EXPECT_EQ(got.fit("direct", Transport::kTcp), nullptr);  // no direct path over tcp
  // The same input gives the same parameters: the fit is deterministic.
  CostParams again;
  ASSERT_TRUE(loomplan::calibrate({std::string(LOOM_PLAN_FIXTURES) + "/measure-2-3-ranks.jsonl"},
                                  &again, false, 8)
                  .ok());
  EXPECT_EQ(again.toString(), got.toString());
  const std::string file = "/tmp/plan_calibrate_stored_" + std::to_string(getpid()) + ".txt";
  std::ofstream(file) << got.toString() << "\n";
  setenv("LOOM_PLAN_PARAMS", ("@" + file).c_str(), 1);
  params::resetCacheForTesting();
  PlannerContext fromFile = shape(CostParams(), 3, "shm");
  fromFile.readEnv = true;
  Planner loaded(fromFile);
  unsetenv("LOOM_PLAN_PARAMS");
  params::resetCacheForTesting();
  std::remove(file.c_str());
  ASSERT_TRUE(loaded.status().ok()) << loaded.status().toString();
  Planner direct(shape(got, 3, "shm"));
  for (uint64_t b : {8ull, 4096ull, 65536ull, 1ull << 22}) {
    const auto& x = loaded.choose(loomplan::allReduceArgs(b));
    const auto& y = direct.choose(loomplan::allReduceArgs(b));
    EXPECT_EQ(x.describe(), y.describe()) << b;
    EXPECT_NEAR(x.predictedSec, y.predictedSec, 1e-3 * y.predictedSec) << b;
  }
}

}  // namespace
}  // namespace loom::plan
