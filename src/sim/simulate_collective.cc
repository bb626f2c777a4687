#include "sim/simulate_collective.h"

#include "sim/report.h"

namespace loom::sim {

Status simulateCollective(const Net& net, const RankBuildFn& build, const sched::CollArgs& args,
                          uint64_t bytes, int nranks, const std::vector<int>& rankGpu,
                          const SimOptions& opt, CollectiveSim* out) {
  if (nranks <= 0 || nranks > net.numGpus())
    return invalidArgument("simulateCollective: ", nranks, " ranks on a net of ", net.numGpus(),
                           " GPUs");
  std::vector<int> hostOf(nranks);
  for (int r = 0; r < nranks; ++r) hostOf[r] = net.hostOfGpu(rankGpu.empty() ? r : rankGpu.at(r));
  ScheduleSet set(nranks);
  LOOM_CHECK(buildScheduleSet(build, args, nranks, hostOf, &set));
  LOOM_CHECK(simulate(net, set, rankGpu, opt, &out->detail));
  out->seconds = out->detail.seconds;
  out->algbwGBps = out->seconds > 0 ? bytes / out->seconds / 1e9 : 0;
  out->busbwGBps = out->algbwGBps * busFactor(args.coll, nranks);
  return Status();
}

}  // namespace loom::sim
