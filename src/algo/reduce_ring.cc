// Ring (chain) reduce: root+1 -> root+2 -> ... -> root, each rank adding its input to the partial
// it receives, pipelined in chunks of chunkBytes. Non-root ranks keep partials in two scratch
// chunks reused every other chunk. Cost (p - 1 + N/chunk) * (alpha + chunk (beta + gamma)).
#include "algo/partition.h"
#include "algo/registry.h"

namespace loom::algo {

Status buildReduceRing(const CollArgs& a, const Group& g, Schedule* out) {
  using sched::kBufRecv;
  using sched::kBufScratch;
  using sched::kBufSend;
  const int p = g.nranks, r = g.rank;
  const uint64_t es = dtypeSize(a.dtype);
  startSchedule(g, "ring", out);
  if (a.count == 0) return Status();
  if (p == 1) {
    if (!a.inPlace) out->copy({kBufSend, 0}, {kBufRecv, 0}, a.count * es);
    return Status();
  }
  const int pos = mod(r - a.root - 1, p);  // chain position: root + 1 is 0, root is p - 1
  const int next = mod(r + 1, p), prev = mod(r - 1, p);
  const uint64_t chunks = loopsFor(a.count, es, a.chunkBytes);
  const uint64_t maxChunk = piece(a.count, chunks, 0).count * es;
  const bool middle = pos > 0 && pos < p - 1;
  if (middle) out->scratchBytes = 2 * maxChunk;
  std::vector<int> sent(chunks, -1);
  for (uint64_t c = 0; c < chunks; ++c) {
    Range k = piece(a.count, chunks, c);
    const uint64_t off = k.first * es, bytes = k.count * es;
    if (pos == 0) {
      out->send(next, {kBufSend, off}, bytes);
    } else if (pos == p - 1) {
      out->recvReduce(prev, {kBufSend, off}, {kBufRecv, off}, bytes);
    } else {
      sched::BufRef tmp{kBufScratch, (c % 2) * maxChunk};
      int reuse = c >= 2 ? sent[c - 2] : -1;
      int red = out->recvReduce(prev, {kBufSend, off}, tmp, bytes, {reuse});
      sent[c] = out->send(next, tmp, bytes, {red});
    }
  }
  return Status();
}

}  // namespace loom::algo
