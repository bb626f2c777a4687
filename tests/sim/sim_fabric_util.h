// Helpers for simulator tests that compare a shortcut with the plain path on generated fabrics:
// a fabric case (generator spec, routing, failures) and every rank's all-reduce schedules.
#pragma once

#include <string>
#include <vector>

#include "algo/registry.h"
#include "sim/from_topology.h"
#include "sim/net.h"
#include "sim/routing.h"
#include "sim/schedule_set.h"
#include "sim/whatif.h"
#include "topo/synth/synth.h"

namespace loom::sim::testing {

struct FabricCase {
  const char* name;
  const char* spec;  // topo::synth generator spec
  RoutingMode routing;
  const char* fail;  // what-if spec ("" none)
};

// The case's fabric with its failures (random ones drawn with `failSeed`).
inline Status netForCase(const FabricCase& c, uint64_t failSeed, Net* net) {
  topo::Topology t;
  LOOM_CHECK(topo::synth::generateFromSpec(c.spec, &t));
  LOOM_CHECK(netFromTopology(t, net));
  std::vector<std::string> done;
  if (*c.fail) LOOM_CHECK(applyFailures(c.fail, failSeed, net, &done));
  return Status();
}

// All ranks' schedules of an all-reduce of `count` floats with `algo` on every GPU of `net`.
inline Status buildAllReduceSet(const Net& net, const char* algo, uint64_t count,
                                uint64_t chunkBytes, ScheduleSet* set) {
  const algo::AlgoInfo* a = algo::findAlgo(sched::CollType::kAllReduce, algo);
  if (!a) return invalidArgument("no builder ", algo);
  const int n = net.numGpus();
  std::vector<int> hostOf(n);
  for (int r = 0; r < n; ++r) hostOf[r] = net.hostOfGpu(r);
  sched::CollArgs args;
  args.count = count;
  args.chunkBytes = chunkBytes;
  return buildScheduleSet(a->build, args, n, hostOf, set);
}

}  // namespace loom::sim::testing
