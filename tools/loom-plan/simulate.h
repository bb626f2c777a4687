// loom-plan --simulate: the planner asks the flow-level simulator (src/sim) where its closed-form
// cost model is unsure, and decides by simulated time there.
//
// The cost model prices a round of concurrent flows by the busiest shared resource (bytes / its
// capacity) plus the longest single flow; it cannot see how flows of successive rounds overlap, how
// max-min sharing redistributes bandwidth when flows end, or pipelining across a contended link.
// So at a size the model is *unsure* when
//   - contention: the model's best candidate is limited by a shared resource (leaf uplinks, global
//     links, a NIC or host memory shared by several flows), not by a single flow; or
//   - close call: another candidate (a different algorithm, order, level or chunk) is predicted
//     within `margin` of the best.
// Then the best `top` candidates (one per algorithm/order/level first, then chunk variants) within
// the window (best x (1 + margin); x 2 under contention) are run through the simulator on the same
// fabric and ranks, and the one with the least simulated time is the decision. Where the model is
// sure, the simulator is not consulted. A forced algorithm (--algo / --tune) is simulated and kept.
//
// Budget: a candidate is simulated only with at most `maxRanks` ranks and at most `flowBudget`
// flows (messages; estimated from rank 0's schedule before anything is built). Beyond it the
// candidate is listed as "over budget" and, if none fits, the model decides.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "plan/planner.h"
#include "sim/engine.h"
#include "sim/net.h"
#include "topo/topology.h"

namespace CLI {
class App;
}

namespace loomplan {

struct SimulateOptions {
  double margin = 0.25;           // close call: within 25% of the best
  int top = 4;                    // candidates simulated per size
  int maxRanks = 4096;            // no simulation above this rank count
  uint64_t flowBudget = 1 << 20;  // per candidate (about 1-5 s of simulator time each)
  bool always = false;            // consult the simulator at every size (validation)
  // > 0: all ranks are processes of this one machine with that many cores (loom's shm/tcp runs,
  // LOOM_TRANSPORT forced; simulateMain takes CostParams::cores when this is 0). The cores are the
  // resource (sim::SimOptions::computeShared): a byte a rank sends or receives costs its core
  // 1 / coreGBps, a byte it reduces on receipt 1 / reduceGBps, and the ranks share the cores
  // max-min fairly; a pair of ranks moves at most the transport's rate (shmGBps / tcpGBps).
  int localCores = 0;
  // Bytes one core moves per second on one side of a transfer (0: 2 x the transport's rate, as
  // when the two ranks of the 2-rank calibration each move both directions on a busy core).
  double coreGBps = 0;
  // Bytes per second one core copies in a schedule's local Copy step (a memcpy: one read and
  // one write on one core; 0: coreGBps, as a transfer's side).
  double copyGBps = 0;
  // Bytes per second one core reduces in a reduction whose local operand is its destination
  // (sim::SimOptions::reduceInPlaceGBps; 0: the parameters' reduceGBps).
  double reduceIpGBps = 0;
  bool inPlace = false;  // simulate the in-place call (sched::CollArgs::inPlace)
  // > 0 (with localCores, over shm): the receiver's local copy rate, against which a reduction
  // out of the pair ring holds the pair's handoff longer (sim::SimOptions::pairCopyGBps; 0: off;
  // over tcp the receiver reduces from its staging after the socket's receive, not in the
  // handoff, so it is not applied there).
  double pairCopyGBps = 0;
  // "K:F,...": with k > localCores ranks busy at once the cores deliver 1 / f(k) of their
  // capacity (sim::SimOptions::busySlowdown; "": off).
  std::string busySlowdown;
  bool busyByDemand = false;  // sim::SimOptions::busyByDemand
  // Non-empty: the decision at each size is simulated once more with step tracing and its steps
  // written here in LOOM_STEP_TRACE's format (rank call step op peer bytes start_us end_us; call
  // k = the k-th size of the table), so perf/step_trace.py reads a simulated run as a real one.
  std::string stepTrace;
};

// Where the ranks are and how they talk: the planner's own context.
struct SimulateSetup {
  const loom::topo::Topology* topology = nullptr;  // null: flat network between hosts
  int hosts = 1, perHost = 1, nranks = 1;
  std::vector<int> hostOf;  // rank -> host (as the planner's)
  loom::plan::Transport interHost = loom::plan::Transport::kTcp;
  loom::plan::CostParams params;
  SimulateOptions opt;
};

struct SimulatedCandidate {
  loom::plan::Decision d;
  double simSec = -1;   // < 0: not simulated (see skipped)
  uint64_t flows = 0;   // messages simulated (or estimated when skipped)
  std::string skipped;  // why not simulated
};

struct SimulatedRow {
  uint64_t bytes = 0;
  loom::plan::Decision model;  // the cost model's choice
  bool consulted = false;      // simulator asked
  std::string why;             // "contention: <resource>", "close call: ...", "sure", "forced"
  std::vector<SimulatedCandidate> sims;
  loom::plan::Decision decision;
  double decisionSimSec = -1;
  std::string by;  // "model", "simulator", "forced"
};

class PlanSimulator {
 public:
  PlanSimulator(loom::plan::Planner* planner, SimulateSetup setup);
  loom::Status init();  // builds the simulator's net
  loom::Status row(const loom::sched::CollArgs& args, SimulatedRow* out);
  // Simulated seconds of one decision (respecting the budget: `skipped` says why not).
  // `traceCall` >= 0 (and `trace`): its steps go to `trace` as call `traceCall`.
  loom::Status simulateOne(const loom::sched::CollArgs& args, SimulatedCandidate* c,
                           int traceCall = -1, std::FILE* trace = nullptr);
  const loom::sim::SimOptions& simOptions() const { return simOpt_; }
  const SimulateOptions& options() const { return s_.opt; }
  std::string describeModel() const;  // one line: what the simulator's net models

 private:
  loom::plan::Planner* planner_;
  SimulateSetup s_;
  std::unique_ptr<loom::sim::Net> net_;
  std::vector<int> rankGpu_;
  loom::sim::SimOptions simOpt_;
};

// The --simulate decision table for sizes lo..hi (x2), printed to stdout.
// countFor(bytes) is the element count for a size (as the plain table's).
loom::Status printSimulateTable(PlanSimulator* ps, loom::sched::CollArgs args, uint64_t lo,
                                uint64_t hi, const std::function<uint64_t(uint64_t)>& countFor);

// loom-plan --simulate: builds the simulator for `setup` (params: the planner's) and prints the
// table; returns the exit status.
int simulateMain(loom::plan::Planner* planner, SimulateSetup setup,
                 const loom::sched::CollArgs& args, uint64_t lo, uint64_t hi,
                 const std::function<uint64_t(uint64_t)>& countFor);

// Adds the --simulate options to a CLI11 app (kept here so loom-plan's main stays short).
void addSimulateOptions(CLI::App* app, bool* simulate, SimulateOptions* opt);

}  // namespace loomplan
