// NCCL-style channels for the simulator: K copies of an algorithm, each over 1/K of the data and
// over its own rank order. Channel c orders ranks host by host with every host's ranks rotated
// by c, so a ring of channel c enters a host on its local rank c and leaves it from local rank
// c - 1: the K rings leave each host through K different GPUs (and NICs), as NCCL's rings do.
// The channels' schedules are appended per rank (Schedule::append) and run concurrently.
#pragma once

#include <vector>

#include "core/status.h"
#include "sim/schedule_set.h"

namespace loom::sim {

// hostOf[r]: host of rank r (empty: every rank its own host). channels >= 1.
Status buildChannels(const RankBuildFn& build, const sched::CollArgs& args, int nranks,
                     const std::vector<int>& hostOf, int channels, ScheduleSet* out);

// The rank order of channel c (position -> rank).
std::vector<int> channelOrder(int nranks, const std::vector<int>& hostOf, int c);

}  // namespace loom::sim
