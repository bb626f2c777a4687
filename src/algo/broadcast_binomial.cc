// Binomial-tree broadcast: the root sends to ranks root + p'/2, root + p'/4, ..., each receiver
// forwards to its own subtree, pipelined in chunks of chunkBytes. ceil(lg p) rounds: latency-
// optimal for small messages, ceil(lg p) alpha + ceil(lg p) N beta unpipelined; with C chunks
// about (ceil(lg p) + C) (alpha + N/C beta) since a node sends each chunk up to lg p times.
#include "algo/partition.h"
#include "algo/registry.h"
#include "algo/trees.h"

namespace loom::algo {

Status buildBroadcastBinomial(const CollArgs& a, const Group& g, Schedule* out) {
  using sched::kBufRecv;
  using sched::kBufSend;
  const int p = g.nranks, r = g.rank;
  const uint64_t es = dtypeSize(a.dtype);
  startSchedule(g, "binomial", out);
  if (a.count == 0) return Status();
  if (a.root < 0 || a.root >= p) return invalidArgument("broadcast root ", a.root, " of ", p);
  const bool root = r == a.root;
  if (root && !a.inPlace) out->copy({kBufSend, 0}, {kBufRecv, 0}, a.count * es);
  if (p == 1) return Status();
  const TreeNode t = binomialNode(r, p, a.root);
  const uint64_t chunks = loopsFor(a.count, es, a.chunkBytes);
  for (uint64_t c = 0; c < chunks; ++c) {
    Range k = piece(a.count, chunks, c);
    const uint64_t off = k.first * es, bytes = k.count * es;
    int got = -1;
    uint16_t src = kBufSend;
    if (!root) {
      got = out->recv(t.parent, {kBufRecv, off}, bytes);
      src = kBufRecv;
    }
    for (int child : t.children) out->send(child, {src, off}, bytes, {got});
  }
  return Status();
}

}  // namespace loom::algo
