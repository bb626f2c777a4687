// Ring reduce-scatter: block b of every rank's input is reduced onto rank b. In step s rank r
// sends its partial of block (r - s - 1) and reduces the incoming partial of block (r - s - 2);
// after p-1 steps the incoming block is r itself, reduced straight into the receive buffer.
// Partials live in two scratch slices per pipeline loop, reused every other step (the reuse waits
// for the send that read the slice). Cost (p-1) alpha + (p-1)/p * N beta, N = p * recvcount bytes.
#include "algo/partition.h"
#include "algo/registry.h"

namespace loom::algo {

Status buildReduceScatterRing(const CollArgs& a, const Group& g, Schedule* out) {
  using sched::kBufRecv;
  using sched::kBufScratch;
  using sched::kBufSend;
  const int p = g.nranks, r = g.rank;
  const uint64_t es = dtypeSize(a.dtype), block = a.count * es;
  startSchedule(g, "ring", out);
  if (a.count == 0) return Status();
  if (p == 1) {
    if (!a.inPlace) out->copy({kBufSend, 0}, {kBufRecv, 0}, block);
    return Status();
  }
  const int next = mod(r + 1, p), prev = mod(r - 1, p);
  const uint64_t loops = loopsFor(a.count, es, a.chunkBytes);
  // Scratch: per loop two slices of the loop's size.
  std::vector<uint64_t> scratchAt(loops);
  uint64_t scratch = 0;
  for (uint64_t L = 0; L < loops; ++L) {
    scratchAt[L] = scratch;
    scratch += 2 * piece(a.count, loops, L).count * es;
  }
  out->scratchBytes = scratch;
  std::vector<int> lastReduce(loops, -1);
  std::vector<std::vector<int>> sends(loops, std::vector<int>(p - 1, -1));
  for (int s = 0; s < p - 1; ++s) {
    for (uint64_t L = 0; L < loops; ++L) {
      Range l = piece(a.count, loops, L);
      const uint64_t bytes = l.count * es;
      auto inSend = [&](int b) {
        return sched::BufRef{kBufSend, mod(b, p) * block + l.first * es};
      };
      auto slice = [&](int step) {
        return sched::BufRef{kBufScratch, scratchAt[L] + (step % 2) * bytes};
      };
      sched::BufRef src = s == 0 ? inSend(r - 1) : slice(s - 1);
      sends[L][s] = out->send(next, src, bytes, {lastReduce[L]});
      const bool last = s == p - 2;
      sched::BufRef dst = last ? sched::BufRef{kBufRecv, l.first * es} : slice(s);
      // Slice s % 2 was last read by the send of step s - 1.
      int reuse = s >= 2 ? sends[L][s - 1] : -1;
      lastReduce[L] = out->recvReduce(prev, inSend(r - s - 2), dst, bytes, {reuse});
    }
  }
  return Status();
}

}  // namespace loom::algo
