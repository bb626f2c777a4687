// Double-binary-tree reduce: the mirror of broadcast_tree.cc. Each half of the buffer is reduced up
// one of the two complementary binary trees (over virtual ranks v = (rank - root) mod p), in chunks
// of chunkBytes; the top of each tree sends the finished chunk to the root (v = 0), which also
// takes part in the trees with its own input like every other rank. Non-root ranks accumulate in
// scratch. Cost ~ (lg p + N/chunk) (alpha + chunk (beta + gamma)).
#include "algo/partition.h"
#include "algo/registry.h"
#include "algo/trees.h"

namespace loom::algo {

Status buildReduceTree(const CollArgs& a, const Group& g, Schedule* out) {
  using sched::kBufRecv;
  using sched::kBufScratch;
  using sched::kBufSend;
  const int p = g.nranks, r = g.rank;
  const uint64_t es = dtypeSize(a.dtype), n = a.count * es;
  startSchedule(g, "tree", out);
  if (a.count == 0) return Status();
  if (a.root < 0 || a.root >= p) return invalidArgument("reduce root ", a.root, " of ", p);
  const int v = mod(r - a.root, p);
  auto real = [&](int x) { return mod(x + a.root, p); };
  if (p == 1) {
    if (!a.inPlace) out->copy({kBufSend, 0}, {kBufRecv, 0}, n);
    return Status();
  }
  const DoubleTree dt = doubleTree(v, p);
  const TreeNode* trees = dt.node;
  const int* top = dt.top;
  const uint16_t acc = v == 0 ? kBufRecv : kBufScratch;
  if (v != 0) out->scratchBytes = n;
  const uint64_t chunks = loopsFor(a.count, es, 2 * a.chunkBytes);
  for (uint64_t c = 0; c < chunks; ++c) {
    for (int t = 0; t < 2; ++t) {
      Range half = piece(a.count, 2, t);
      Range k = piece(half.count, chunks, c);
      if (k.count == 0) continue;
      const uint64_t off = (half.first + k.first) * es, bytes = k.count * es;
      uint16_t src = kBufSend;
      int last = -1;
      for (int child : trees[t].children) {
        last = out->recvReduce(real(child), {src, off}, {acc, off}, bytes, {last});
        src = acc;
      }
      if (v == 0) {
        if (top[t] == 0) {
          if (src != kBufRecv && !a.inPlace) out->copy({src, off}, {kBufRecv, off}, bytes);
          continue;
        }
        int up = out->send(real(trees[t].parent), {src, off}, bytes, {last});
        out->recv(real(top[t]), {kBufRecv, off}, bytes, {up});  // overwrites what `up` read
      } else {
        const int to = v == top[t] ? 0 : trees[t].parent;
        out->send(real(to), {src, off}, bytes, {last});
      }
    }
  }
  return Status();
}

}  // namespace loom::algo
