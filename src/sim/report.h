// Summaries of a simulation: nccl-tests style bandwidths, utilisation per link level and per
// group, and the busiest links.
#pragma once

#include <string>
#include <vector>

#include "sched/schedule.h"
#include "sim/engine.h"
#include "sim/net.h"

namespace loom::sim {

// busbw / algbw factor of nccl-tests for a collective on n ranks.
double busFactor(sched::CollType c, int n);

struct LevelUtil {
  LinkLevel level;
  int links = 0;               // links of this level in service
  double mean = 0, max = 0;    // utilisation (busy fraction of the makespan)
  std::vector<double> sorted;  // every link's utilisation, descending
};
std::vector<LevelUtil> utilisationByLevel(const Net& net, const SimResult& r);

struct GroupUtil {  // switch links by the group of their source switch (Dragonfly+ group, pod)
  int group = -1;
  double meanGlobal = 0, maxGlobal = 0, meanLocal = 0, maxLocal = 0;
};
std::vector<GroupUtil> utilisationByGroup(const Net& net, const SimResult& r);

struct BusyLink {
  int link;
  double utilisation;
  double bytes;
};
std::vector<BusyLink> busiestLinks(const Net& net, const SimResult& r, int k);

}  // namespace loom::sim
