// Recursive-doubling all-gather: at step k a rank swaps everything it has gathered so far with
// virtual rank v ^ 2^k, so the gathered window doubles each step (masks 1, 2, 4, ...: each window
// stays contiguous in the output). Cost: lg p' alpha + (p-1)/p N beta, N = p * count bytes.
// Non-power-of-two p folds (butterfly.h): an extra rank sends its block to its odd neighbour first
// and receives the whole result last (+2 alpha + N beta). Data moves only in the receive buffer;
// in place (send = recv + rank * count) needs no copy.
#include "algo/butterfly.h"
#include "algo/partition.h"
#include "algo/registry.h"
#include "algo/step_util.h"

namespace loom::algo {

Status buildAllGatherRd(const CollArgs& a, const Group& g, Schedule* out) {
  using sched::kBufRecv;
  using sched::kBufSend;
  const int p = g.nranks, x = g.rank;
  const uint64_t es = dtypeSize(a.dtype), blk = a.count * es, total = blk * p;
  startSchedule(g, "rd", out);
  if (a.count == 0) return Status();
  const Fold f(p);
  if (f.isExtra(x)) {
    int s = out->send(x + 1, {kBufSend, 0}, blk);
    out->recv(x + 1, {kBufRecv, 0}, total, {s});
    return Status();
  }
  std::vector<int> have;
  if (!a.inPlace) have.push_back(out->copy({kBufSend, 0}, {kBufRecv, x * blk}, blk));
  const bool folded = x < 2 * f.extra;
  if (folded) have.push_back(out->recv(x - 1, {kBufRecv, (x - 1) * blk}, blk));
  const int v = f.vrank(x);
  auto bytesOf = [&](Window w) {
    uint64_t lo = f.firstReal(w.lo) * blk, hi = f.firstReal(w.hi) * blk;
    return Range{lo, hi - lo};
  };
  const std::vector<HalvingStep> steps = halvingSteps(v, f.pow2, /*farFirst=*/true);
  for (size_t k = steps.size(); k-- > 0;) {
    const int peer = f.real(v ^ steps[k].mask);
    Range keep = bytesOf(steps[k].keep), give = bytesOf(steps[k].give);
    out->add(sendStep(peer, {kBufRecv, keep.first}, keep.count), have);
    have.push_back(out->recv(peer, {kBufRecv, give.first}, give.count));
  }
  if (folded) out->add(sendStep(x - 1, {kBufRecv, 0}, total), have);
  return Status();
}

}  // namespace loom::algo
