// Direct barrier: the direct all-reduce of nothing (allreduce_direct.cc). Every rank marks its
// slot with the call's sequence number and waits until every slot carries it: one cache-line
// hand-off per peer instead of ceil(log2 p) rounds of messages. One-host communicators only
// (LOOM_HOST_ALGO).
#include "algo/partition.h"
#include "algo/registry.h"

namespace loom::algo {

Status buildBarrierDirect(const CollArgs&, const Group& g, Schedule* out) {
  startSchedule(g, "direct", out);
  if (g.nranks > 1) out->hostAllReduce({sched::kBufSend, 0}, {sched::kBufRecv, 0}, 0);
  return Status();
}

}  // namespace loom::algo
