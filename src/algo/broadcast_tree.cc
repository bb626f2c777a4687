// Double-binary-tree broadcast: the buffer is halved and each half flows down one of the two
// complementary binary trees of allreduce_tree.cc (trees.h), pipelined in chunks of chunkBytes.
// Trees are built over virtual ranks v = (rank - root) mod p. The root (v = 0) sends each chunk to
// the tree's top (when that is not itself) and to its own children in that tree; it never
// receives. A rank is interior in at most one tree, so it forwards about N/2 x 2 bytes, and the
// depth is lg p: cost ~ (lg p + N/chunk) (alpha + chunk beta), against the chain's
// (p - 1 + N/chunk) and the binomial tree's lg p x N beta.
#include "algo/partition.h"
#include "algo/registry.h"
#include "algo/trees.h"

namespace loom::algo {

Status buildBroadcastTree(const CollArgs& a, const Group& g, Schedule* out) {
  using sched::kBufRecv;
  using sched::kBufSend;
  const int p = g.nranks, r = g.rank;
  const uint64_t es = dtypeSize(a.dtype);
  startSchedule(g, "tree", out);
  if (a.count == 0) return Status();
  if (a.root < 0 || a.root >= p) return invalidArgument("broadcast root ", a.root, " of ", p);
  const int v = mod(r - a.root, p);
  auto real = [&](int x) { return mod(x + a.root, p); };
  if (v == 0 && !a.inPlace) out->copy({kBufSend, 0}, {kBufRecv, 0}, a.count * es);
  if (p == 1) return Status();
  const DoubleTree dt = doubleTree(v, p);
  const TreeNode* trees = dt.node;
  const int* top = dt.top;
  const uint64_t chunks = loopsFor(a.count, es, 2 * a.chunkBytes);
  for (uint64_t c = 0; c < chunks; ++c) {
    for (int t = 0; t < 2; ++t) {
      Range half = piece(a.count, 2, t);
      Range k = piece(half.count, chunks, c);
      if (k.count == 0) continue;
      const uint64_t off = (half.first + k.first) * es, bytes = k.count * es;
      int got = -1;
      uint16_t src = kBufSend;
      if (v == 0) {
        if (top[t] != 0) out->send(real(top[t]), {kBufSend, off}, bytes);
      } else {
        const int from = v == top[t] ? 0 : trees[t].parent;
        got = out->recv(real(from), {kBufRecv, off}, bytes);
        src = kBufRecv;
      }
      for (int child : trees[t].children)
        if (child != 0) out->send(real(child), {src, off}, bytes, {got});
    }
  }
  return Status();
}

}  // namespace loom::algo
