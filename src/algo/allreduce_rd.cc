// Recursive-doubling all-reduce: in step k every rank swaps its whole vector with rank v ^ 2^k and
// reduces; after lg p' steps all hold the sum. Latency-optimal for small messages:
// lg p' alpha + lg p' N beta + lg p' N gamma. Both partners combine the same two partial sums, so
// every rank ends with bitwise identical results. Non-power-of-two p folds as in butterfly.h:
// extra ranks hand their vector to a neighbour first and receive the result last
// (+2 alpha + 2 N beta). The incoming vector lands in scratch (N bytes) and is reduced after the
// outgoing send completed, so no byte is overwritten while a send may still read it.
#include "algo/butterfly.h"
#include "algo/partition.h"
#include "algo/registry.h"
#include "algo/step_util.h"

namespace loom::algo {

Status buildAllReduceRd(const CollArgs& a, const Group& g, Schedule* out) {
  using sched::kBufRecv;
  using sched::kBufScratch;
  using sched::kBufSend;
  const int p = g.nranks, x = g.rank;
  const uint64_t n = a.count * dtypeSize(a.dtype);
  startSchedule(g, "rd", out);
  if (a.count == 0) return Status();
  const Fold f(p);
  if (f.isExtra(x)) {
    int s = out->send(x + 1, {kBufSend, 0}, n);
    out->recv(x + 1, {kBufRecv, 0}, n, {s});
    return Status();
  }
  int last = -1;  // last write of the receive buffer
  if (x < 2 * f.extra) {
    last = out->recvReduce(x - 1, {kBufSend, 0}, {kBufRecv, 0}, n);
  } else if (!a.inPlace) {
    last = out->copy({kBufSend, 0}, {kBufRecv, 0}, n);
  }
  if (p == 1) return Status();
  out->scratchBytes = n;
  const int v = f.vrank(x);
  int lastReduce = -1;
  for (int m = 1; m < f.pow2; m *= 2) {
    const int peer = f.real(v ^ m);
    int s = out->send(peer, {kBufRecv, 0}, n, {last});
    int r = out->recv(peer, {kBufScratch, 0}, n, {lastReduce});
    lastReduce = last = out->reduce({kBufScratch, 0}, {kBufRecv, 0}, n, {s, r});
  }
  if (x < 2 * f.extra) out->send(x - 1, {kBufRecv, 0}, n, {last});
  return Status();
}

}  // namespace loom::algo
