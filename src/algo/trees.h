// Tree shapes shared by the tree builders.
//
// In-order binary tree over positions 1..n: node x has height ctz(x); its children are
// x - 2^(h-1) and the first of x + 2^(h-1), x + 2^(h-2), ... that exists; the root is the largest
// power of two <= n. Odd positions are leaves, even ones interior. The double binary tree
// (Sanders, Speck, Traeff 2009; NCCL's tree) uses two such trees whose interior nodes are the other
// one's leaves: tree 1 puts rank r at position r + 1, tree 2 mirrors it (even p) or shifts it by
// one (odd p), so every rank is interior in at most one tree and sends/receives about N per tree.
//
// Binomial tree rooted at `root`: virtual rank v = (r - root) mod p; the parent of v clears its
// lowest set bit, the children are v + 2^k for 2^k below v's lowest set bit.
#pragma once

#include <vector>

#include "algo/partition.h"

namespace loom::algo {

struct TreeNode {
  int parent = -1;
  std::vector<int> children;  // in the order messages are exchanged
};

inline int lowBit(int x) { return x & -x; }

// Node at position x (1-based) of the in-order binary tree over 1..n; results are positions.
inline TreeNode inOrderNode(int x, int n) {
  TreeNode t;
  const int l = lowBit(x);
  if (l > 1) {
    t.children.push_back(x - l / 2);
    for (int k = l / 2; k >= 1; k /= 2) {
      if (x + k <= n) {
        t.children.push_back(x + k);
        break;
      }
    }
  }
  for (int y = x;;) {
    const int ly = lowBit(y);
    if (ly > n) break;  // x is the root
    const int up = (y & (2 * ly)) ? y - ly : y + ly;
    if (up <= n) {
      t.parent = up;
      break;
    }
    y = up;
  }
  return t;
}

// Rank r's node in tree `which` (0 or 1) of the double binary tree over p ranks; ranks in results.
inline TreeNode doubleTreeNode(int r, int p, int which) {
  auto toPos = [&](int rank) {
    if (which == 0) return rank + 1;
    return (p % 2 == 0 ? p - 1 - rank : (rank + 1) % p) + 1;
  };
  auto toRank = [&](int pos) {
    int q = pos - 1;
    if (which == 0) return q;
    return p % 2 == 0 ? p - 1 - q : mod(q - 1, p);
  };
  TreeNode t = inOrderNode(toPos(r), p);
  if (t.parent >= 0) t.parent = toRank(t.parent);
  for (int& c : t.children) c = toRank(c);
  return t;
}

// Rank r's node in both trees of the double binary tree over p ranks, and each tree's top (the
// rank without a parent), as the rooted broadcast and reduce need them.
struct DoubleTree {
  TreeNode node[2];
  int top[2];
};
inline DoubleTree doubleTree(int r, int p) {
  DoubleTree d;
  for (int t = 0; t < 2; ++t) {
    d.node[t] = doubleTreeNode(r, p, t);
    for (int x = 0; x < p; ++x)
      if (doubleTreeNode(x, p, t).parent < 0) d.top[t] = x;
  }
  return d;
}

// Rank r's node in the binomial tree over p ranks rooted at `root`. Children are listed largest
// subtree first (the order that finishes a broadcast soonest).
inline TreeNode binomialNode(int r, int p, int root) {
  TreeNode t;
  const int v = mod(r - root, p);
  if (v > 0) t.parent = mod((v & (v - 1)) + root, p);
  const int limit = v == 0 ? p : lowBit(v);
  int top = 1;
  while (top * 2 < limit) top *= 2;
  for (int k = top; k >= 1; k /= 2)
    if (k < limit && v + k < p) t.children.push_back(mod(v + k + root, p));
  return t;
}

}  // namespace loom::algo
