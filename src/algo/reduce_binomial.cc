// Binomial-tree reduce: the mirror of the binomial broadcast. Each rank reduces its children's
// partial sums (smallest subtree first) into an accumulator, on top of its own input, and sends
// the result to its parent; the root accumulates in its receive buffer, the others in scratch.
// Pipelined in chunks of chunkBytes. ceil(lg p) alpha + ceil(lg p) N (beta + gamma) unpipelined.
#include "algo/partition.h"
#include "algo/registry.h"
#include "algo/trees.h"

namespace loom::algo {

Status buildReduceBinomial(const CollArgs& a, const Group& g, Schedule* out) {
  using sched::kBufRecv;
  using sched::kBufScratch;
  using sched::kBufSend;
  const int p = g.nranks, r = g.rank;
  const uint64_t es = dtypeSize(a.dtype), n = a.count * es;
  startSchedule(g, "binomial", out);
  if (a.count == 0) return Status();
  if (a.root < 0 || a.root >= p) return invalidArgument("reduce root ", a.root, " of ", p);
  const bool root = r == a.root;
  if (p == 1) {
    if (!a.inPlace) out->copy({kBufSend, 0}, {kBufRecv, 0}, n);
    return Status();
  }
  TreeNode t = binomialNode(r, p, a.root);
  std::vector<int> kids(t.children.rbegin(), t.children.rend());
  const uint16_t acc = root ? kBufRecv : kBufScratch;
  if (!root && !kids.empty()) out->scratchBytes = n;
  const uint64_t chunks = loopsFor(a.count, es, a.chunkBytes);
  for (uint64_t c = 0; c < chunks; ++c) {
    Range k = piece(a.count, chunks, c);
    const uint64_t off = k.first * es, bytes = k.count * es;
    uint16_t src = kBufSend;
    int last = -1;
    for (int child : kids) {
      last = out->recvReduce(child, {src, off}, {acc, off}, bytes, {last});
      src = acc;
    }
    if (!root) {
      out->send(t.parent, {src, off}, bytes, {last});
    } else if (kids.empty() && !a.inPlace) {
      out->copy({kBufSend, off}, {kBufRecv, off}, bytes);
    }
  }
  return Status();
}

}  // namespace loom::algo
