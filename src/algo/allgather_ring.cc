// Ring all-gather: rank r's block travels r -> r+1 -> ... for p-1 steps; in step s rank r forwards
// block (r - s) and receives block (r - s - 1). Pipelined in loops of about chunkBytes per block.
// In place (sendbuf == recvbuf + r * block) the initial copy is skipped. Cost (p-1) alpha +
// (p-1)/p * N beta, N = p * sendcount bytes.
#include "algo/partition.h"
#include "algo/registry.h"

namespace loom::algo {

Status buildAllGatherRing(const CollArgs& a, const Group& g, Schedule* out) {
  using sched::kBufRecv;
  using sched::kBufSend;
  const int p = g.nranks, r = g.rank;
  const uint64_t es = dtypeSize(a.dtype), block = a.count * es;
  startSchedule(g, "ring", out);
  if (a.count == 0) return Status();
  if (!a.inPlace) out->copy({kBufSend, 0}, {kBufRecv, r * block}, block);
  if (p == 1) return Status();
  const int next = mod(r + 1, p), prev = mod(r - 1, p);
  const uint64_t loops = loopsFor(a.count, es, a.chunkBytes);
  std::vector<int> lastRecv(loops, -1);
  for (int s = 0; s < p - 1; ++s) {
    for (uint64_t L = 0; L < loops; ++L) {
      Range l = piece(a.count, loops, L);
      const uint64_t bytes = l.count * es;
      sched::BufRef src = s == 0 ? sched::BufRef{kBufSend, l.first * es}
                                 : sched::BufRef{kBufRecv, mod(r - s, p) * block + l.first * es};
      out->send(next, src, bytes, {lastRecv[L]});
      lastRecv[L] = out->recv(prev, {kBufRecv, mod(r - s - 1, p) * block + l.first * es}, bytes);
    }
  }
  return Status();
}

}  // namespace loom::algo
