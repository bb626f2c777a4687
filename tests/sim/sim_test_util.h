// Helpers for the simulator tests: a hand-built two-level fat-tree on sim::Net (the test does not
// depend on the topology generators) and a tiny ring all-reduce builder over any rank order, used
// only to exercise the engine.
#pragma once

#include <vector>

#include "sched/schedule.h"
#include "sim/engine.h"
#include "sim/net.h"
#include "sim/schedule_set.h"

namespace loom::sim::testing {

struct TinyFatTree {
  int leaves = 4;
  int spines = 4;
  int hostsPerLeaf = 4;
  int rails = 1;  // NICs per host; rail r of each host goes to rail-r leaves
  double leafSpineGBps = 50;
};

// Leaves are switches 0..leaves*rails-1 (leaf l of rail r = r * leaves + l), spines after them.
inline Status buildFatTree(const TinyFatTree& t, Net* net) {
  std::vector<int> leaf, spine;
  for (int r = 0; r < t.rails; ++r)
    for (int l = 0; l < t.leaves; ++l)
      leaf.push_back(net->addSwitch(strCat("leaf", r, ".", l), 1, -1));
  for (int s = 0; s < t.spines; ++s) spine.push_back(net->addSwitch(strCat("spine", s), 2, -1));
  for (int l : leaf)
    for (int s : spine) net->addLinkPair(l, s, t.leafSpineGBps, LinkLevel::kTier1);
  for (int l = 0; l < t.leaves; ++l) {
    for (int h = 0; h < t.hostsPerLeaf; ++h) {
      std::vector<int> nics;
      for (int r = 0; r < t.rails; ++r) nics.push_back(leaf[r * t.leaves + l]);
      LOOM_CHECK(net->addHost(nics));
    }
  }
  return Status();
}

// Ring all-reduce over ranks in `order` (reduce-scatter then all-gather, one block of bytes/p per
// step, no pipelining): step s+1 of a rank waits for its receive of step s.
inline sched::Schedule tinyRing(int rank, const std::vector<int>& order, uint64_t bytes) {
  int p = static_cast<int>(order.size());
  int pos = 0;
  while (order[pos] != rank) ++pos;
  int next = order[(pos + 1) % p], prev = order[(pos + p - 1) % p];
  sched::Schedule s;
  s.rank = rank;
  s.nranks = p;
  s.algo = "tinyring";
  uint64_t block = bytes / p;
  int last = -1;
  for (int k = 0; k < 2 * (p - 1); ++k) {
    s.send(next, {sched::kBufRecv, 0}, block, {last});
    if (k < p - 1)
      last = s.recvReduce(prev, {sched::kBufSend, 0}, {sched::kBufRecv, 0}, block, {last});
    else
      last = s.recv(prev, {sched::kBufRecv, 0}, block, {last});
  }
  return s;
}

// Hosts of one GPU and one NIC: a hand-written schedule's ranks are hosts.
inline NodeParams oneGpuHosts() {
  NodeParams p;
  p.gpusPerNode = 1;
  p.nicsPerNode = 1;
  p.nvlinkDomain = 1;
  return p;
}

// p empty schedules of ranks 0..p-1, to write by hand.
inline std::vector<sched::Schedule> emptySchedules(int p) {
  std::vector<sched::Schedule> s(p);
  for (int r = 0; r < p; ++r) {
    s[r].rank = r;
    s[r].nranks = p;
  }
  return s;
}

// Runs hand-written schedules (rank r: ranks[r]) unfolded with options `o` (fold set off).
inline Status simulateUnfolded(const Net& net, const std::vector<sched::Schedule>& ranks,
                               SimOptions* o, SimResult* res) {
  ScheduleSet set(static_cast<int>(ranks.size()));
  for (const sched::Schedule& s : ranks) LOOM_CHECK(set.add(s));
  o->fold = false;
  return simulate(net, set, {}, *o, res);
}

inline std::vector<int> identityOrder(int p) {
  std::vector<int> o(p);
  for (int i = 0; i < p; ++i) o[i] = i;
  return o;
}

}  // namespace loom::sim::testing
