// Flow-level simulation of a ScheduleSet on a Net.
//
// Every rank runs its shape: a step starts when its dependencies are done. The k-th Send a->b and
// the k-th Recv on b from a (schedule.h's FIFO rule) form one flow once both are ready
// (rendezvous). A flow follows its routed path; the rates of all active flows are max-min fair
// (weighted progressive filling, a sprayed flow using w of its rate on a link of weight w) and
// are recomputed whenever flows start or end. Send and Recv complete when the last byte is in plus
// the path's latency; a RecvReduce then reduces at reduceGBps, Copy/Reduce cost bytes / rate.
//
// Exploited regularity (SimOptions::exact turns all off, `components` the second, `fold` the third;
// tests compare): events at the same instant (within timeEpsilon) are processed as one batch with
// one rate recomputation; a recomputation only touches the connected component (flows sharing
// links, transitively) of the links whose flows changed, since max-min rates of other components
// cannot change; and symmetric ranks run folded into classes, one flow per class and step with a
// multiplicity, on links folded into classes (fold.h says when that is exact).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/net.h"
#include "sim/routing.h"
#include "sim/schedule_set.h"

namespace loom::sim {

struct SimOptions {
  RoutingMode routing = RoutingMode::kSpray;
  uint64_t seed = 1;
  double latNvlinkUs = 1.0;    // per message over NVLink
  double latPcieUs = 1.5;      // per message between GPUs of one host over PCIe
  double latNetUs = 2.0;       // per message through the network (NICs, software)...
  double latHopUs = 0.3;       // ...plus this per switch crossed
  double reduceGBps = 1000;    // RecvReduce / Reduce compute rate (0: free)
  double copyGBps = 1000;      // local Copy rate (0: free)
  bool exact = false;          // no batching, global recomputation (slow; for tests)
  bool components = true;      // recompute only the touched component (false: all flows)
  bool fold = true;            // fold symmetric ranks and links into classes (fold.h)
  int foldMinMembers = 4;      // ...when classes average at least this many ranks (else the
                               // analysis, every member's path, costs more than it saves)
  double timeEpsilon = 1e-12;  // seconds: events this close count as simultaneous
};

struct SimResult {
  double seconds = 0;  // makespan: last step done
  uint64_t flows = 0, batches = 0, recomputes = 0, recomputeFlows = 0, events = 0;
  uint64_t solverFlows = 0;  // flows the solver ran: `flows` unless folded (one per class)
  int foldClasses = 0;       // rank classes of a folded run (0: not folded)
  std::string foldNote;      // what was folded, or why not
  int maxComponentFlows = 0;
  std::vector<double> linkBytes;    // bytes carried per link (weight-scaled)
  std::vector<double> rankSeconds;  // when each rank's last step finished
  double wallSeconds = 0;
  // Fraction of the makespan each link was busy carrying bytes at full capacity.
  double utilisation(const Net& net, int link) const;
};

// rankGpu[r] = GPU that runs rank r (empty: GPU r).
Status simulate(const Net& net, const ScheduleSet& set, const std::vector<int>& rankGpu,
                const SimOptions& opt, SimResult* out);

}  // namespace loom::sim
