// Flow-level simulation of a ScheduleSet on a Net.
//
// Every rank runs its shape: a step starts when its dependencies are done. The k-th Send a->b and
// the k-th Recv on b from a (schedule.h's FIFO rule) form one flow once both are ready
// (rendezvous). Messages from a to b share one connection and go out in order (FIFO, as on loom's
// transports): a message whose connection is busy waits, and is not a second flow sharing the
// links (that would make k queued messages all finish k times later, and a pipelined ring then
// moves in bursts: a flat 8,192-GPU ring at 1 GiB gave 0.4 instead of 50 GB/s busbw). A flow
// follows its routed path; the rates of all active flows are max-min fair (weighted progressive
// filling, a sprayed flow using w of its rate on a link of weight w) and are recomputed whenever
// flows start or end. Send and Recv complete when the last byte is in plus
// the path's latency; a RecvReduce then reduces at reduceGBps (reduceInPlaceGBps when its local
// operand is its destination), Copy/Reduce cost bytes / rate.
//
// Compute is a resource like a link (SimOptions::computeShared): every rank has one core, and a
// reduction or copy is a flow on it of bytes / rate core-seconds, so work that runs at once on a
// rank shares its core max-min fairly (a rank reducing two children's chunks at once reduces each
// at half speed); SimOptions::hostCores caps all ranks of a host together (more processes than
// cores share the cores as flows share a link). Where the CPUs also move the bytes (loom's shm and
// tcp on one machine: sendCoreGBps / recvCoreGBps > 0) a transfer crosses the sender's and the
// receiver's cores too, so copies and reductions contend for the same cores.
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
#include <utility>
#include <vector>

#include "core/status.h"
#include "sim/net.h"
#include "sim/routing.h"
#include "sim/schedule_set.h"

namespace loom::sim {

struct SimOptions {
  RoutingMode routing = RoutingMode::kSpray;
  uint64_t seed = 1;
  double latNvlinkUs = 1.0;  // per message over NVLink
  double latPcieUs = 1.5;    // per message between GPUs of one host over PCIe
  double latNetUs = 2.0;     // per message through the network (NICs, software)...
  double latHopUs = 0.3;     // ...plus this per switch crossed
  double reduceGBps = 1000;  // RecvReduce / Reduce compute rate (0: free)
  // ...for a reduction whose local operand is its destination (SimStep::inPlace: dst = dst (op)
  // x, two operands instead of three; a CPU's in-place reduction runs 1.4-2x faster); 0:
  // reduceGBps.
  double reduceInPlaceGBps = 0;
  double copyGBps = 1000;  // local Copy rate (0: free)
  // Compute as a shared resource (see above). Off by default for fabric runs (a GPU's 1000 GB/s of
  // reduction is never the limit there, and each reduction costs a solver flow and an event: one
  // more --batch-us error per step); on in the local-host model (loom-plan --sim-cores). Off: every
  // Reduce/Copy takes bytes / rate however many run at once on a rank.
  bool computeShared = false;
  double hostCores = 0;  // > 0: all ranks of a host share this many cores (0: no host limit)
  // Transfers performed by the CPUs (0: by NICs/DMA engines, no core time): a byte sent costs the
  // sender 1 / sendCoreGBps core-nanoseconds, a byte received the receiver 1 / recvCoreGBps...
  double sendCoreGBps = 0, recvCoreGBps = 0;
  // ...and a reducing receive that reduces straight out of the transport (loom's shm and tcp do)
  // costs the receiver 1 / recvReduceCoreGBps per byte, with no reduction after it (0: the
  // reduction follows the transfer, at reduceGBps).
  double recvReduceCoreGBps = 0;
  double recvReduceInPlaceCoreGBps = 0;  // ...when it reduces in place (0: recvReduceCoreGBps)
  // A CPU-performed transfer between two ranks also runs at most at this rate, shared by the
  // pair's messages at once (the handoff of slices between two processes; 0: no such limit).
  double pairGBps = 0;
  // ...and a receive that reduces as it drains the pair (a fused RecvReduce) holds the handoff
  // longer than one that copies: each byte it reduces costs the pair's link 1 / pairGBps plus
  // what the reduction costs over a copy, 1 / (its recvReduce rate) - 1 / pairCopyGBps, when
  // positive (pairCopyGBps: the receiver's local copy rate, the copy pairGBps was measured
  // with; 0: no such cost). An in-place reduction, about a copy's rate on a CPU, adds ~nothing.
  double pairCopyGBps = 0;
  // Oversubscription by busy ranks (hostCores > 0): while k ranks of a host are busy (at least one
  // transfer or compute flow crosses their core) and k > hostCores, the host's cores deliver
  // 1 / f(k) of their capacity. What more processes than cores cost (context switches, cache
  // refills, wake-ups) grows with the processes runnable at once, not with the ranks on the host:
  // a rank blocked in a receive costs little, so a tree whose levels keep two ranks busy is not
  // slowed like a ring that keeps all of them busy. Points (k, f), k > hostCores and increasing,
  // f > 0 (f < 1: faster than the plain max-min share); f(k) = 1 for k <= hostCores, linear
  // between (hostCores, 1) and the points, the last point's f past it. Empty: off. On, the run
  // is not folded, and a batch in which a host's f changes re-solves all flows.
  std::vector<std::pair<int, double>> busySlowdown;
  // ...and a busy rank counts as the share of its core its flows would take at their caps (at
  // most 1): a rank that moves bytes at its peer's pace, waiting half the time, counts half.
  bool busyByDemand = false;
  bool exact = false;  // no batching, global recomputation, no folding, no bundles
  // Unfolded spray / Valiant runs: parallel switch links crossed evenly count as one constraint
  // (Router::setBundles; a path that crosses a bundle unevenly makes simulate() rerun without).
  bool bundle = true;
  // Per-step dependency counts for every step of every rank (true), or only for steps with
  // several dependencies (false: a step with one becomes ready when it is done, and a waiting
  // step is marked only when its side of a connection went out of order); a deadlock then runs
  // again with them to name the step. `exact` keeps them all.
  bool trackSteps = false;
  bool components = true;      // recompute only the touched component (false: all flows)
  bool fold = true;            // fold symmetric ranks and links into classes (fold.h)
  int foldMinMembers = 4;      // ...when classes average at least this many ranks (else the
                               // analysis, every member's path, costs more than it saves)
  double timeEpsilon = 1e-12;  // seconds: events this close count as simultaneous
  // Record when each step of each rank became ready (its dependencies done: a transfer is posted)
  // and when it finished (SimResult::stepStartSeconds / stepEndSeconds), as LOOM_STEP_TRACE does
  // for a real run. Folded ranks get their class's times. Small runs only: two doubles per step.
  bool traceSteps = false;
};

struct SimResult {
  double seconds = 0;  // makespan: last step done
  uint64_t flows = 0, batches = 0, recomputes = 0, recomputeFlows = 0, events = 0;
  uint64_t solverFlows = 0;   // flows the solver ran: `flows` unless folded (one per class)
  uint64_t computeFlows = 0;  // reductions and copies run as flows on cores (computeShared)
  int foldClasses = 0;        // rank classes of a folded run (0: not folded)
  std::string foldNote;       // what was folded, or why not
  int maxComponentFlows = 0;
  std::vector<double> linkBytes;    // bytes carried per link (weight-scaled)
  std::vector<double> rankSeconds;  // when each rank's last step finished
  // SimOptions::traceSteps: per rank, per schedule step, when it became ready and finished.
  std::vector<std::vector<double>> stepStartSeconds, stepEndSeconds;
  double wallSeconds = 0;
  // Fraction of the makespan each link was busy carrying bytes at full capacity.
  double utilisation(const Net& net, int link) const;
};

// rankGpu[r] = GPU that runs rank r (empty: GPU r).
Status simulate(const Net& net, const ScheduleSet& set, const std::vector<int>& rankGpu,
                const SimOptions& opt, SimResult* out);

}  // namespace loom::sim
