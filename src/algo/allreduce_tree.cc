// Double-binary-tree all-reduce (NCCL's tree): the buffer is halved and each half is reduced up
// one of two complementary in-order binary trees (trees.h) and broadcast back down it, pipelined
// in chunks of about chunkBytes. A rank is interior in at most one tree, so per tree it sends and
// receives about N/2 up and N/2 down: about 2N bytes in total per rank, like a ring's 2(p-1)/p N,
// while the latency grows with the depth 2 lg p instead of the ring's 2(p-1):
// cost ~ (2 lg p + N/chunk) (alpha + chunk beta) + N gamma.
// Per chunk a node reduces its children's chunks into its receive buffer (the first on top of its
// own input), sends the sum up, receives the final chunk from its parent and passes it down.
#include "algo/registry.h"
#include "algo/trees.h"

namespace loom::algo {
namespace {

struct TreeChunk {
  const TreeNode* node;
  uint64_t off, bytes;
};

// One chunk of one tree. `in` is where this rank's own contribution is.
void treeChunk(Schedule* out, const TreeChunk& c, uint16_t in) {
  using sched::kBufRecv;
  const TreeNode& t = *c.node;
  int last = -1;
  uint16_t src = in;
  for (int child : t.children) {
    last = out->recvReduce(child, {src, c.off}, {kBufRecv, c.off}, c.bytes, {last});
    src = kBufRecv;
  }
  if (t.parent >= 0) {
    int up = out->send(t.parent, {src, c.off}, c.bytes, {last});
    // Overwrites what `up` read (and, in place, the input): wait for the send.
    last = out->recv(t.parent, {kBufRecv, c.off}, c.bytes, {up});
  } else if (t.children.empty() && src != kBufRecv) {
    last = out->copy({src, c.off}, {kBufRecv, c.off}, c.bytes);
  }
  for (int child : t.children) out->send(child, {kBufRecv, c.off}, c.bytes, {last});
}

}  // namespace

Status buildAllReduceTree(const CollArgs& a, const Group& g, Schedule* out) {
  using sched::kBufRecv;
  using sched::kBufSend;
  const int p = g.nranks, r = g.rank;
  const uint64_t es = dtypeSize(a.dtype);
  *out = Schedule();
  out->rank = r;
  out->nranks = p;
  out->algo = "tree";
  if (a.count == 0) return Status();
  if (p == 1) {
    if (!a.inPlace) out->copy({kBufSend, 0}, {kBufRecv, 0}, a.count * es);
    return Status();
  }
  const TreeNode trees[2] = {doubleTreeNode(r, p, 0), doubleTreeNode(r, p, 1)};
  const uint64_t chunks = loopsFor(a.count, es, 2 * a.chunkBytes);
  const uint16_t in = a.inPlace ? kBufRecv : kBufSend;
  for (uint64_t c = 0; c < chunks; ++c) {
    for (int t = 0; t < 2; ++t) {
      Range half = piece(a.count, 2, t);
      Range k = piece(half.count, chunks, c);
      if (k.count == 0) continue;
      treeChunk(out, {&trees[t], (half.first + k.first) * es, k.count * es}, in);
    }
  }
  return Status();
}

}  // namespace loom::algo
