// Recursive-halving reduce-scatter: p' = 2^floor(lg p) virtual ranks; at step k a rank sends the
// half of its current window that its partner v ^ mask keeps and reduces the incoming other half
// into scratch. Masks run p'/2, ..., 1 so virtual rank v ends holding exactly its own blocks.
// Cost: lg p' alpha + (p'-1)/p' N beta + (p'-1)/p' N gamma, N = p * count bytes. Non-power-of-two
// p folds (butterfly.h): an extra rank sends its whole input to its odd neighbour, which later
// returns the extra's reduced block (+2 alpha + N beta). Works in scratch (N bytes), so the send
// buffer is never written and in-place (recv = send + rank * count) is safe.
#include "algo/butterfly.h"
#include "algo/partition.h"
#include "algo/registry.h"
#include "algo/step_util.h"

namespace loom::algo {

Status buildReduceScatterHalving(const CollArgs& a, const Group& g, Schedule* out) {
  using sched::kBufRecv;
  using sched::kBufScratch;
  using sched::kBufSend;
  const int p = g.nranks, x = g.rank;
  const uint64_t es = dtypeSize(a.dtype), blk = a.count * es, total = blk * p;
  startSchedule(g, "halving", out);
  if (a.count == 0) return Status();
  if (p == 1) {
    if (!a.inPlace) out->copy({kBufSend, 0}, {kBufRecv, 0}, blk);
    return Status();
  }
  const Fold f(p);
  if (f.isExtra(x)) {
    int s = out->send(x + 1, {kBufSend, 0}, total);
    out->recv(x + 1, {kBufRecv, 0}, blk, {s});
    return Status();
  }
  out->scratchBytes = total;
  const int v = f.vrank(x);
  const bool folded = x < 2 * f.extra;
  uint16_t cur = kBufSend;
  int last = -1;
  if (folded) {
    last = out->recvReduce(x - 1, {kBufSend, 0}, {kBufScratch, 0}, total);
    cur = kBufScratch;
  }
  auto bytesOf = [&](Window w) {
    uint64_t lo = f.firstReal(w.lo) * blk, hi = f.firstReal(w.hi) * blk;
    return Range{lo, hi - lo};  // in bytes
  };
  std::vector<int> sends;
  for (const HalvingStep& st : halvingSteps(v, f.pow2, /*farFirst=*/true)) {
    const int peer = f.real(v ^ st.mask);
    Range give = bytesOf(st.give), keep = bytesOf(st.keep);
    sends.push_back(out->send(peer, {cur, give.first}, give.count, {last}));
    last = out->recvReduce(peer, {cur, keep.first}, {kBufScratch, keep.first}, keep.count, {last});
    cur = kBufScratch;
  }
  sends.push_back(last);
  if (folded) out->send(x - 1, {kBufScratch, (x - 1) * blk}, blk, {last});
  out->add(sched::Step{sched::OpKind::kCopy, 0, -1, {kBufScratch, x * blk}, {kBufRecv, 0}, blk},
           sends);
  return Status();
}

}  // namespace loom::algo
