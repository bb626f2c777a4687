// loom-sim --algo planner: the planner's own choice (src/plan) for the simulated fabric, and with
// --fail the choice made again on the degraded fabric, so a run shows what a failure costs the plan
// that was made for the healthy fabric and whether re-planning wins some of it back.
#pragma once

#include <memory>
#include <string>

#include "plan/planner.h"
#include "sim/engine.h"
#include "sim/from_topology.h"
#include "sim/net.h"
#include "sim/schedule_set.h"
#include "topo/topology.h"

namespace loom::simtool {

// The cost parameters the planner prices with: the simulated machine's (NVLink inside a host,
// the NICs and switch latencies of the fabric, the simulator's reduction rate), then `overrides`
// (CostParams text, loom-plan --params syntax) on top.
Status planParams(const sim::NodeParams& node, const sim::SimOptions& so,
                  const std::string& overrides, plan::CostParams* out);

// A planner for ranks 0..n-1 on GPUs 0..n-1 of `net` (rank r on the host of GPU r), seeing
// `topo` (whose hosts are the net's, in order: sim::netFromTopology).
std::unique_ptr<plan::Planner> makePlanner(const topo::Topology& topo, const sim::Net& net, int n,
                                           const plan::CostParams& params);

// The planner's decision for `args` (no direct path: loom-sim runs schedules) and every rank's
// schedule for it.
Status plannedSet(plan::Planner* planner, const sched::CollArgs& args, int n,
                  const std::vector<int>& hostOf, plan::Decision* d, sim::ScheduleSet* set);

// `healthy` as the failed net sees it: every fabric link that is down in `failed` is down, and
// link rates are scaled as `failed` scales them against `healthyNet` (links of the fabric; the
// hosts' own links keep their rates). Classified again (levels, groups, global link pairs).
Status degradedTopology(const topo::Topology& healthy, const sim::TopoMap& map,
                        const sim::Net& healthyNet, const sim::Net& failed, topo::Topology* out);

}  // namespace loom::simtool
