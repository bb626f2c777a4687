// Rabenseifner all-reduce: reduce-scatter by recursive halving, then all-gather by recursive
// doubling (Thakur, Rabenseifner, Gropp 2005). p' = 2^floor(lg p) virtual ranks cut the buffer into
// p' blocks; at halving step k a rank swaps half of its current window with partner v ^ mask and
// reduces the half it keeps, the all-gather replays the steps backwards. Halving runs masks
// 1, 2, 4, ... so the big early exchanges stay between neighbours and the far ones carry the
// smallest slices. Non-power-of-two p folds: the extra ranks (even ranks below 2(p - p')) send
// their whole vector to their odd neighbour first and receive the result last.
// Cost: 2 lg p' alpha + 2 (p'-1)/p' N beta + (p'-1)/p' N gamma, plus 2 alpha + 2 N beta for the
// fold when p is not a power of two.
#include "algo/butterfly.h"
#include "algo/partition.h"
#include "algo/registry.h"
#include "algo/step_util.h"

namespace loom::algo {

Status buildAllReduceRabenseifner(const CollArgs& a, const Group& g, Schedule* out) {
  using sched::kBufRecv;
  using sched::kBufSend;
  const int p = g.nranks, x = g.rank;
  const uint64_t es = dtypeSize(a.dtype), n = a.count * es;
  startSchedule(g, "rabenseifner", out);
  if (a.count == 0) return Status();
  if (p == 1) {
    if (!a.inPlace) out->copy({kBufSend, 0}, {kBufRecv, 0}, n);
    return Status();
  }
  const Fold f(p);
  if (f.isExtra(x)) {
    int s = out->send(x + 1, {kBufSend, 0}, n);
    out->recv(x + 1, {kBufRecv, 0}, n, {s});
    return Status();
  }
  const int v = f.vrank(x);
  uint16_t cur = kBufSend;  // slot holding this rank's running partial
  int last = -1;            // last step that wrote the receive buffer
  if (x < 2 * f.extra) {
    last = out->recvReduce(x - 1, {kBufSend, 0}, {kBufRecv, 0}, n);
    cur = kBufRecv;
  }
  // Reduce-scatter by recursive halving.
  const std::vector<HalvingStep> steps = halvingSteps(v, f.pow2, /*farFirst=*/false);
  std::vector<int> gaveSend(steps.size(), -1);
  for (size_t k = 0; k < steps.size(); ++k) {
    const int peer = f.real(v ^ steps[k].mask);
    Range give = windowRange(a.count, f.pow2, steps[k].give);
    Range keep = windowRange(a.count, f.pow2, steps[k].keep);
    if (give.count) gaveSend[k] = out->send(peer, {cur, give.first * es}, give.count * es, {last});
    if (keep.count)
      last = out->recvReduce(peer, {cur, keep.first * es}, {kBufRecv, keep.first * es},
                             keep.count * es, {last});
    cur = kBufRecv;
  }
  // All-gather by recursive doubling: undo the halving steps in reverse order.
  std::vector<int> have = {last};
  for (size_t k = steps.size(); k-- > 0;) {
    const int peer = f.real(v ^ steps[k].mask);
    Range keep = windowRange(a.count, f.pow2, steps[k].keep);
    Range give = windowRange(a.count, f.pow2, steps[k].give);
    if (keep.count) out->add(sendStep(peer, {kBufRecv, keep.first * es}, keep.count * es), have);
    if (give.count)
      have.push_back(out->recv(peer, {kBufRecv, give.first * es}, give.count * es, {gaveSend[k]}));
  }
  if (x < 2 * f.extra) out->add(sendStep(x - 1, {kBufRecv, 0}, n), have);
  return Status();
}

}  // namespace loom::algo
