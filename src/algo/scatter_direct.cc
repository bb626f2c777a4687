// Direct scatter: the root sends block q of its send buffer straight to rank q and copies its own
// block locally (no copy in place); every other rank receives one block. Cost at the root
// (p-1) alpha + (p-1)/p * N beta, N = p * count bytes.
#include "algo/partition.h"
#include "algo/registry.h"

namespace loom::algo {

Status buildScatterDirect(const CollArgs& a, const Group& g, Schedule* out) {
  using sched::kBufRecv;
  using sched::kBufSend;
  const int p = g.nranks, r = g.rank;
  const uint64_t block = a.count * dtypeSize(a.dtype);
  startSchedule(g, "direct", out);
  if (a.count == 0) return Status();
  if (r != a.root) {
    out->recv(a.root, {kBufRecv, 0}, block);
    return Status();
  }
  if (!a.inPlace) out->copy({kBufSend, r * block}, {kBufRecv, 0}, block);
  for (int k = 1; k < p; ++k) {
    const int to = mod(r + k, p);
    out->send(to, {kBufSend, to * block}, block);
  }
  return Status();
}

}  // namespace loom::algo
