// Double-binary-tree all-reduce (NCCL's tree): the buffer is halved and each half is reduced up
// one of two complementary in-order binary trees (trees.h) and broadcast back down it, pipelined
// in chunks of about chunkBytes. A rank is interior in at most one tree, so per tree it sends and
// receives about N/2 up and N/2 down: about 2N bytes in total per rank, like a ring's 2(p-1)/p N,
// while the latency grows with the depth 2 lg p instead of the ring's 2(p-1):
// cost ~ (2 lg p + N/chunk) (alpha + chunk beta) + N gamma.
// Per chunk a node reduces its children's chunks into its receive buffer (the first on top of its
// own input), sends the sum up, receives the final chunk from its parent and passes it down.
#include "algo/partition.h"
#include "algo/registry.h"
#include "algo/trees.h"

namespace loom::algo {
namespace {

struct TreeChunk {
  const TreeNode* node;
  uint64_t off, bytes;
  int last = -1, up = -1;  // up phase: last reduction and the send to the parent
};

// Up phase of one chunk of one tree: reduce the children's chunks into the receive buffer (the
// first on top of this rank's own input `in`) and send the sum to the parent.
void treeUp(Schedule* out, TreeChunk* c, uint16_t in) {
  using sched::kBufRecv;
  uint16_t src = in;
  for (int child : c->node->children) {
    c->last = out->recvReduce(child, {src, c->off}, {kBufRecv, c->off}, c->bytes, {c->last});
    src = kBufRecv;
  }
  if (c->node->parent >= 0) c->up = out->send(c->node->parent, {src, c->off}, c->bytes, {c->last});
}

// Down phase: receive the final chunk from the parent (over what `up` read, so after it) and pass
// it to the children.
void treeDown(Schedule* out, TreeChunk* c) {
  using sched::kBufRecv;
  if (c->node->parent >= 0)
    c->last = out->recv(c->node->parent, {kBufRecv, c->off}, c->bytes, {c->up});
  for (int child : c->node->children) out->send(child, {kBufRecv, c->off}, c->bytes, {c->last});
}

}  // namespace

Status buildAllReduceTree(const CollArgs& a, const Group& g, Schedule* out) {
  using sched::kBufRecv;
  using sched::kBufSend;
  const int p = g.nranks, r = g.rank;
  const uint64_t es = dtypeSize(a.dtype);
  startSchedule(g, "tree", out);
  if (a.count == 0) return Status();
  if (p == 1) {
    if (!a.inPlace) out->copy({kBufSend, 0}, {kBufRecv, 0}, a.count * es);
    return Status();
  }
  const TreeNode trees[2] = {doubleTreeNode(r, p, 0), doubleTreeNode(r, p, 1)};
  const uint64_t chunks = loopsFor(a.count, es, 2 * a.chunkBytes);
  const uint16_t in = a.inPlace ? kBufRecv : kBufSend;
  // Messages to one peer are FIFO, and a pair may carry up traffic in one tree and down traffic in
  // the other. Steps are therefore ordered by when they can run: slot s holds the up phase of
  // chunk s and the down phase of chunk s - lag, lag = a round trip through the deepest tree, so
  // an early up message never waits behind a down message that is not ready yet.
  int depth = 1;
  while ((1 << depth) <= p) ++depth;
  const uint64_t lag = 2 * depth;
  std::vector<TreeChunk> st(2 * chunks);
  size_t perChunk = 0;  // steps (and deps) per chunk of both trees: reserved, no regrowth
  for (const TreeNode& t : trees) perChunk += 2 * t.children.size() + (t.parent >= 0 ? 2 : 0);
  out->steps.reserve(chunks * perChunk);
  out->deps.reserve(chunks * perChunk);
  for (uint64_t c = 0; c < chunks; ++c) {
    for (int t = 0; t < 2; ++t) {
      Range half = piece(a.count, 2, t);
      Range k = piece(half.count, chunks, c);
      st[2 * c + t] = TreeChunk{&trees[t], (half.first + k.first) * es, k.count * es};
    }
  }
  for (uint64_t s = 0; s < chunks + lag; ++s) {
    for (int t = 0; t < 2; ++t)
      if (s < chunks && st[2 * s + t].bytes) treeUp(out, &st[2 * s + t], in);
    for (int t = 0; t < 2; ++t) {
      if (s < lag || s - lag >= chunks) continue;
      TreeChunk& c = st[2 * (s - lag) + t];
      if (c.bytes == 0) continue;
      treeDown(out, &c);
    }
  }
  return Status();
}

}  // namespace loom::algo
