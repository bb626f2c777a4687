// Dissemination barrier: in round k (distance 2^k) rank r sends an empty message to r + 2^k and
// waits for one from r - 2^k; after ceil(log2 p) rounds every rank has heard, transitively, from
// every other. Cost ceil(log2 p) alpha.
#include "algo/partition.h"
#include "algo/registry.h"

namespace loom::algo {

Status buildBarrierDissemination(const CollArgs&, const Group& g, Schedule* out) {
  const int p = g.nranks, r = g.rank;
  startSchedule(g, "dissemination", out);
  int prevRecv = -1;
  for (int d = 1; d < p; d *= 2) {
    out->send(mod(r + d, p), {sched::kBufSend, 0}, 0, {prevRecv});
    prevRecv = out->recv(mod(r - d, p), {sched::kBufRecv, 0}, 0, {prevRecv});
  }
  return Status();
}

}  // namespace loom::algo
