// Registry of schedule builders (registry.def). A builder is pure: it returns one rank's Schedule
// for (CollArgs, Group) and never touches a transport. Ranks in a Schedule are communicator ranks.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "sched/schedule.h"

namespace loom::algo {

using sched::CollArgs;
using sched::CollType;
using sched::Group;
using sched::Schedule;

using Builder = Status (*)(const CollArgs&, const Group&, Schedule*);

#define LOOM_ALGO(coll, name, fn) \
  Status fn(const CollArgs& args, const Group& group, Schedule* out);
#define LOOM_HOST_ALGO LOOM_ALGO
#include "algo/registry.def"
#undef LOOM_HOST_ALGO
#undef LOOM_ALGO

struct AlgoInfo {
  CollType coll;
  const char* name;
  Builder build;
  // Its schedule is one step over the transport's one-host collective primitive (kHostAllReduce):
  // only for communicators that have one (planner: PlannerContext::directBytes).
  bool host = false;
};

const std::vector<AlgoInfo>& registry();
// nullptr when (coll, name) is not registered.
const AlgoInfo* findAlgo(CollType coll, const std::string& name);
// The algorithms of `coll` that run on any communicator; with `withHost` also the one-host ones.
std::vector<const AlgoInfo*> algosFor(CollType coll, bool withHost = false);

}  // namespace loom::algo
