// Ring (chain) broadcast: root -> root+1 -> ... -> root-1, pipelined in chunks of chunkBytes, so
// for large messages every link carries the data once: cost (p - 1 + N/chunk) * (alpha + chunk
// beta).
#include "algo/partition.h"
#include "algo/registry.h"

namespace loom::algo {

Status buildBroadcastRing(const CollArgs& a, const Group& g, Schedule* out) {
  using sched::kBufRecv;
  using sched::kBufSend;
  const int p = g.nranks, r = g.rank;
  const uint64_t es = dtypeSize(a.dtype);
  startSchedule(g, "ring", out);
  if (a.count == 0) return Status();
  const int pos = mod(r - a.root, p);  // position in the chain, root = 0
  const int next = mod(r + 1, p), prev = mod(r - 1, p);
  if (pos == 0 && !a.inPlace) out->copy({kBufSend, 0}, {kBufRecv, 0}, a.count * es);
  if (p == 1) return Status();
  const uint64_t chunks = loopsFor(a.count, es, a.chunkBytes);
  for (uint64_t c = 0; c < chunks; ++c) {
    Range k = piece(a.count, chunks, c);
    const uint64_t off = k.first * es, bytes = k.count * es;
    if (pos == 0) {
      out->send(next, {kBufSend, off}, bytes);
      continue;
    }
    int got = out->recv(prev, {kBufRecv, off}, bytes);
    if (pos != p - 1) out->send(next, {kBufRecv, off}, bytes, {got});
  }
  return Status();
}

}  // namespace loom::algo
