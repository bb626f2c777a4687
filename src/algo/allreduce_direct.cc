// Direct all-reduce: one step over the transport's one-host collective primitive
// (transport::HostCollective; shm's segment with a slot per rank, LOOM_SHM_DIRECT_BYTES). Each rank
// copies its contribution into its slot, waits until every slot holds this call's data and reduces
// all slots in rank order into its receive buffer, so every rank computes the same bits. No rounds
// and no pipeline: a cache-line hand-off per peer plus p reads of the message, which beats every
// ring or tree for small messages on one host. Registered with LOOM_HOST_ALGO: the planner offers
// it only to communicators whose every rank shares one host, up to the slot size.
#include "algo/partition.h"
#include "algo/registry.h"

namespace loom::algo {

Status buildAllReduceDirect(const CollArgs& a, const Group& g, Schedule* out) {
  using sched::kBufRecv;
  using sched::kBufSend;
  const uint64_t bytes = a.count * dtypeSize(a.dtype);
  startSchedule(g, "direct", out);
  if (a.count == 0) return Status();
  if (g.nranks == 1) {
    if (!a.inPlace) out->copy({kBufSend, 0}, {kBufRecv, 0}, bytes);
    return Status();
  }
  out->hostAllReduce({kBufSend, 0}, {kBufRecv, 0}, bytes);
  return Status();
}

}  // namespace loom::algo
