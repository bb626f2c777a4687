#include "planned.h"

#include "topo/classify.h"

namespace loom::simtool {

Status planParams(const sim::NodeParams& node, const sim::SimOptions& so,
                  const std::string& overrides, plan::CostParams* out) {
  plan::CostParams p;
  p.shmAlphaUs = so.latNvlinkUs;  // inside a host: NVLink through the NVSwitch
  p.shmGBps = node.nvlinkGBps;
  p.hostMemGBps = node.nvlinkGBps * node.gpusPerNode;
  p.netAlphaUs = so.latNetUs;
  p.switchHopUs = so.latHopUs;
  p.netGBps = node.nicGBps;
  p.reduceGBps = so.reduceGBps > 0 ? so.reduceGBps : 1e6;
  if (!overrides.empty()) LOOM_CHECK(plan::CostParams::parse(p.toString() + "," + overrides, &p));
  *out = p;
  return Status();
}

std::unique_ptr<plan::Planner> makePlanner(const topo::Topology& topo, const sim::Net& net, int n,
                                           const plan::CostParams& params) {
  plan::PlannerContext ctx;
  ctx.nranks = n;
  for (int r = 0; r < n; ++r) ctx.hostOf.push_back(net.hostOfGpu(r));
  ctx.interHost = plan::Transport::kNet;
  ctx.topology = &topo;
  ctx.params = params;
  ctx.readEnv = false;
  return std::make_unique<plan::Planner>(ctx);
}

Status plannedSet(plan::Planner* planner, const sched::CollArgs& args, int n,
                  const std::vector<int>& hostOf, plan::Decision* d, sim::ScheduleSet* set) {
  *d = planner->choose(args, false);
  if (!d->algo) return invalidArgument("planner: no candidate for ", args.count, " elements");
  const plan::Decision& dec = *d;
  auto build = [&](const sched::CollArgs& a, const sched::Group& g, sched::Schedule* out) {
    return planner->build(dec, a, g.rank, out);
  };
  return sim::buildScheduleSet(build, args, n, hostOf, set);
}

Status degradedTopology(const topo::Topology& healthy, const sim::TopoMap& map,
                        const sim::Net& healthyNet, const sim::Net& failed, topo::Topology* out) {
  *out = healthy;
  topo::Fabric& f = out->fabric;
  if (map.netLink.size() != f.links.size())
    return invalidArgument("degradedTopology: map does not match the topology");
  for (size_t i = 0; i < f.links.size(); ++i) {
    const int id = map.netLink[i];
    if (id < 0) continue;
    const sim::Link& a = failed.link(id);
    const sim::Link& b = failed.link(id + 1);
    f.links[i].up = f.links[i].up && a.up && b.up;
    const double was = healthyNet.link(id).bytesPerSec;
    if (was > 0) f.links[i].gbps *= a.bytesPerSec / was;
  }
  out->cls = topo::Classification();
  topo::classify(out);
  return Status();
}

}  // namespace loom::simtool
