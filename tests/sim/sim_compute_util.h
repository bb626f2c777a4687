// Helpers for the compute tests (SimOptions::computeShared and busySlowdown): ranks as processes
// of CPU hosts on which only the cores limit, a schedule that only reduces, and a run's makespan.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <vector>

#include "sched/schedule.h"
#include "sim/engine.h"
#include "sim/local_host.h"
#include "sim/schedule_set.h"

namespace loom::sim::testing {

inline std::unique_ptr<Net> oneHost(int ranks, int hosts = 1) {
  LocalHostParams p;
  p.hosts = hosts;
  p.ranksPerHost = ranks;
  p.flowGBps = 1000;  // the network never limits here: only cores do
  p.hostGBps = 0;
  p.nicGBps = 1000;
  std::unique_ptr<Net> net;
  EXPECT_TRUE(localHostNet(p, &net).ok());
  return net;
}

// p ranks, rank r's schedule from steps(r, &schedule).
inline ScheduleSet eachRank(int p, const std::function<void(int, sched::Schedule*)>& steps) {
  ScheduleSet set(p);
  for (int r = 0; r < p; ++r) {
    sched::Schedule s;
    s.rank = r;
    s.nranks = p;
    steps(r, &s);
    EXPECT_TRUE(set.add(s).ok());
  }
  return set;
}

// Rank r reduces bytes[r] (one Reduce step; 0 bytes: no step, the rank never works).
inline ScheduleSet reduceOnly(const std::vector<uint64_t>& bytes) {
  return eachRank(static_cast<int>(bytes.size()), [&](int r, sched::Schedule* s) {
    if (bytes[r] > 0) s->reduce({sched::kBufSend, 0}, {sched::kBufRecv, 0}, bytes[r]);
  });
}

// Simulated seconds (the run must succeed).
inline double run(const Net& net, const ScheduleSet& set, const SimOptions& o) {
  SimResult res;
  Status s = simulate(net, set, {}, o, &res);
  EXPECT_TRUE(s.ok()) << s.toString();
  return res.seconds;
}

}  // namespace loom::sim::testing
