// Direct gather: every rank sends its `count` elements straight to the root, which receives them in
// rank order into block q of its receive buffer and copies its own block locally (no copy in
// place). The root's link carries all (p-1) blocks: cost (p-1) alpha + (p-1)/p * N beta at the
// root, N = p * count bytes; a tree would save latency only, not root bandwidth.
#include "algo/partition.h"
#include "algo/registry.h"

namespace loom::algo {

Status buildGatherDirect(const CollArgs& a, const Group& g, Schedule* out) {
  using sched::kBufRecv;
  using sched::kBufSend;
  const int p = g.nranks, r = g.rank;
  const uint64_t block = a.count * dtypeSize(a.dtype);
  startSchedule(g, "direct", out);
  if (a.count == 0) return Status();
  if (r != a.root) {
    out->send(a.root, {kBufSend, 0}, block);
    return Status();
  }
  if (!a.inPlace) out->copy({kBufSend, 0}, {kBufRecv, r * block}, block);
  for (int k = 1; k < p; ++k) {  // start with the next rank so the receives fan out evenly
    const int from = mod(r + k, p);
    out->recv(from, {kBufRecv, from * block}, block);
  }
  return Status();
}

}  // namespace loom::algo
