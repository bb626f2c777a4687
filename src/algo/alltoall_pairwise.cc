// Pairwise all-to-all: in round k = 1..p-1 rank r sends its block for (r + k) and receives the
// block from (r - k); every round pairs distinct ranks, so no link is shared twice in a round.
// The own block is a local copy. Cost (p-1) alpha + (p-1)/p * N beta, N = p * count bytes.
#include "algo/partition.h"
#include "algo/registry.h"

namespace loom::algo {

Status buildAllToAllPairwise(const CollArgs& a, const Group& g, Schedule* out) {
  using sched::kBufRecv;
  using sched::kBufSend;
  const int p = g.nranks, r = g.rank;
  const uint64_t block = a.count * dtypeSize(a.dtype);
  startSchedule(g, "pairwise", out);
  if (a.count == 0) return Status();
  out->copy({kBufSend, r * block}, {kBufRecv, r * block}, block);
  for (int k = 1; k < p; ++k) {
    const int to = mod(r + k, p), from = mod(r - k, p);
    out->send(to, {kBufSend, to * block}, block);
    out->recv(from, {kBufRecv, from * block}, block);
  }
  return Status();
}

}  // namespace loom::algo
