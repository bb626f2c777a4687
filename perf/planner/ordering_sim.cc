// ordering_sim: runs the same all-reduce plans through the planner's cost model and through the
// flow-level fabric simulator (src/sim), on a generated fabric with the job's hosts in linear or
// scattered order, and prints predicted and simulated times side by side: the rank-order ring, the
// topology-ordered ring, and the planner's choice.
//   ordering_sim SPEC SIZE [gpus-per-host] [linear|scatter]
//   ordering_sim
//   "dragonfly:groups=8,leavesPerGroup=4,spinesPerGroup=4,hostsPerLeaf=8,globalLinksPerSpine=2"
//   256m 1 scatter
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>

#include "plan/planner.h"
#include "sim/engine.h"
#include "sim/from_topology.h"
#include "topo/classify.h"
#include "topo/synth/synth.h"

using namespace loom;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s SPEC SIZE [gpus-per-host] [linear|scatter]\n", argv[0]);
    return 2;
  }
  const std::string spec = argv[1];
  uint64_t bytes = 0;
  if (!plan::parseSize(argv[2], &bytes).ok()) return 2;
  const int gpus = argc > 3 ? std::atoi(argv[3]) : 1;
  const bool scatter = argc > 4 && std::string(argv[4]) == "scatter";
  topo::Topology t;
  Status s = topo::synth::generateFromSpec(spec, &t);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.toString().c_str());
    return 1;
  }
  topo::classify(&t);
  sim::NodeParams np;
  np.gpusPerNode = gpus;
  np.nicsPerNode = 1;
  np.nvlinkDomain = gpus;
  sim::Net net(np);
  s = sim::netFromTopology(t, &net);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.toString().c_str());
    return 1;
  }
  const int hosts = static_cast<int>(t.hosts.size()), p = hosts * gpus;
  std::vector<int> order(hosts);
  for (int h = 0; h < hosts; ++h) order[h] = h;
  if (scatter) std::shuffle(order.begin(), order.end(), std::mt19937(1));
  plan::PlannerContext ctx;
  ctx.nranks = p;
  ctx.interHost = plan::Transport::kNet;
  ctx.topology = &t;
  ctx.readEnv = false;
  ctx.params.shmAlphaUs = 1;
  ctx.params.shmGBps = 150;
  ctx.params.hostMemGBps = 600;
  ctx.params.netAlphaUs = 2;
  ctx.params.switchHopUs = 0.3;
  ctx.params.reduceGBps = 1000;
  std::vector<int> rankGpu(p);
  for (int r = 0; r < p; ++r) {
    ctx.hostOf.push_back(order[r / gpus]);
    rankGpu[r] = net.host(order[r / gpus]).firstGpu + r % gpus;
  }
  plan::Planner planner(ctx);
  sched::CollArgs args;
  args.count = bytes / 4;
  std::vector<plan::Decision> picks;
  for (const plan::Decision& d : planner.candidates(args)) {
    bool ring = std::string(d.algo->name) == "ring" && d.chunkBytes == 512 * 1024;
    if (ring) picks.push_back(d);
  }
  picks.push_back(planner.choose(args));
  std::printf("# %s, %d ranks (%d per host), %s placement, allreduce %s\n", spec.c_str(), p, gpus,
              scatter ? "scattered" : "linear", argv[2]);
  std::printf("%-46s %14s %14s\n", "plan", "predicted(us)", "simulated(us)");
  for (const plan::Decision& d : picks) {
    sim::ScheduleSet set(p);
    s = sim::buildScheduleSet(
        [&](const sched::CollArgs& a, const sched::Group& g, sched::Schedule* out) {
          return planner.build(d, a, g.rank, out);
        },
        args, p, ctx.hostOf, &set);
    sim::SimResult res;
    if (s.ok()) s = sim::simulate(net, set, rankGpu, sim::SimOptions(), &res);
    if (!s.ok()) {
      std::fprintf(stderr, "%s: %s\n", d.describe().c_str(), s.toString().c_str());
      return 1;
    }
    std::printf("%-46s %14.1f %14.1f\n", d.describe().c_str(), d.predictedSec * 1e6,
                res.seconds * 1e6);
  }
  return 0;
}
