#include "plan/patterns.h"

#include <algorithm>
#include <map>

#include "algo/butterfly.h"
#include "algo/channels.h"
#include "algo/partition.h"
#include "algo/trees.h"

namespace loom::plan {
namespace {

using sched::CollType;

uint64_t ceilDiv(uint64_t a, uint64_t b) { return b ? (a + b - 1) / b : 0; }

struct Ctx {
  const PatternArgs& pa;
  std::vector<Round>* out;
  int rank(const std::vector<int>& members, int v) const { return members[v]; }
  void add(std::vector<Flow> flows, uint64_t repeat, uint64_t reduce) {
    if (repeat == 0 || flows.empty()) return;
    Round r;
    r.flows = std::move(flows);
    r.repeat = repeat;
    r.reduceBytes = reduce;
    out->push_back(std::move(r));
  }
};

// Ring over `m` (positions in order): `steps` rounds of every member sending `bytes` onward.
void ringRounds(Ctx* c, const std::vector<int>& m, uint64_t bytes, uint64_t steps, bool reduce) {
  const int p = static_cast<int>(m.size());
  if (p < 2 || bytes == 0) return;
  std::vector<Flow> f;
  for (int v = 0; v < p; ++v) f.push_back({m[v], m[(v + 1) % p], bytes});
  c->add(std::move(f), steps, reduce ? bytes : 0);
}

// Ring all-reduce of `n` bytes over members, pipelined like buildAllReduceRing.
void ringAllReduce(Ctx* c, const std::vector<int>& m, uint64_t n, uint64_t chunk, bool rs,
                   bool ag) {
  const uint64_t p = m.size();
  if (p < 2 || n == 0) return;
  const uint64_t loops = std::max<uint64_t>(1, ceilDiv(n, chunk * p));
  const uint64_t seg = ceilDiv(n, p * loops);
  if (rs) ringRounds(c, m, seg, (p - 1) * loops, true);
  if (ag) ringRounds(c, m, seg, (p - 1) * loops, false);
}

// Double binary tree as buildAllReduceTree: the first chunk climbs the trees level by level
// (children of height h send in round h) and comes back down the same way; the remaining chunks
// stream behind it with every tree edge busy in both directions.
// upOnly / downOnly: the reduce / broadcast halves of it (broadcast_tree.cc, reduce_tree.cc).
void treeAllReduce(Ctx* c, const std::vector<int>& m, uint64_t n, uint64_t chunk,
                   bool withUp = true, bool withDown = true) {
  const int p = static_cast<int>(m.size());
  if (p < 2 || n == 0) return;
  const uint64_t chunks = std::max<uint64_t>(1, ceilDiv(n, 2 * chunk));
  const uint64_t bytes = ceilDiv(n, 2 * chunks);
  int top = 0;
  while ((2 << top) <= p) ++top;
  std::vector<std::vector<Flow>> up(top + 1), down(top + 1);
  std::vector<Flow> all;
  for (int t = 0; t < 2; ++t) {
    for (int v = 0; v < p; ++v) {
      algo::TreeNode node = algo::doubleTreeNode(v, p, t);
      if (node.parent < 0) continue;
      // Height of v in tree t = trailing zeros of its 1-based position.
      int pos = t == 0 ? v + 1 : (p % 2 == 0 ? p - 1 - v : (v + 1) % p) + 1, h = 0;
      while (pos % 2 == 0) pos /= 2, ++h;
      up[h].push_back({m[v], m[node.parent], bytes});
      down[h].push_back({m[node.parent], m[v], bytes});
      if (withUp) all.push_back(up[h].back());
      if (withDown) all.push_back(down[h].back());
    }
  }
  for (int h = 0; h <= top && withUp; ++h) c->add(up[h], 1, 2 * bytes);
  for (int h = top; h >= 0 && withDown; --h) c->add(down[h], 1, 0);
  c->add(std::move(all), chunks - 1, withUp ? 2 * bytes : 0);
}

// Recursive doubling / halving among the members, folded to a power of two.
void butterfly(Ctx* c, const std::vector<int>& m, uint64_t n, const std::string& kind) {
  const int p = static_cast<int>(m.size());
  if (p < 2 || n == 0) return;
  algo::Fold fold(p);
  std::vector<Flow> in, outF;
  for (int e = 0; e < fold.extra; ++e) {
    in.push_back({m[2 * e], m[2 * e + 1], n});
    outF.push_back({m[2 * e + 1], m[2 * e], n});
  }
  c->add(in, 1, n);
  std::vector<int> masks;
  for (int k = 1; k < fold.pow2; k *= 2) masks.push_back(k);
  auto step = [&](int mask, uint64_t bytes, bool reduce) {
    std::vector<Flow> f;
    for (int v = 0; v < fold.pow2; ++v)
      f.push_back({m[fold.real(v)], m[fold.real(v ^ mask)], bytes});
    c->add(std::move(f), 1, reduce ? bytes : 0);
  };
  if (kind == "rd") {
    for (int mask : masks) step(mask, n, true);
  } else {  // rabenseifner: halving near first, doubling far first
    uint64_t b = n;
    for (int mask : masks) step(mask, b = ceilDiv(b, 2), true);
    for (auto it = masks.rbegin(); it != masks.rend(); ++it) {
      step(*it, b, false);
      b *= 2;
    }
  }
  c->add(outF, 1, 0);
}

// ring_rail: k snake-ordered rings (algo/channels.h), each over 1/k of the bytes, running at the
// same time: round i of the result holds round i of every channel's ring.
void ringRail(Ctx* c, const PatternArgs& pa, uint64_t n, uint64_t es, uint64_t chunk) {
  sched::Group g;
  g.nranks = pa.nranks;
  g.hostOf = pa.parts;
  const int k = algo::channelsFor(pa.args, g);
  const uint64_t slice = algo::piece(pa.args.count, k, 0).count * es;
  std::vector<Round> merged;
  for (int ch = 0; ch < k; ++ch) {
    std::vector<Round> rs;
    Ctx cc{pa, &rs};
    ringAllReduce(&cc, algo::channelOrder(g, ch, algo::ChannelOrder::kSnake), slice, chunk, true,
                  true);
    for (Round& r : rs)
      for (Flow& f : r.flows) f.channel = ch;
    if (merged.empty()) {
      merged = std::move(rs);
      continue;
    }
    for (size_t i = 0; i < merged.size() && i < rs.size(); ++i) {
      merged[i].flows.insert(merged[i].flows.end(), rs[i].flows.begin(), rs[i].flows.end());
      merged[i].reduceBytes += rs[i].reduceBytes;  // a rank reduces for every channel
    }
  }
  (void)n;
  for (Round& r : merged) c->add(std::move(r.flows), r.repeat, r.reduceBytes);
}

std::vector<int> positions(const PatternArgs& pa) {
  if (pa.order.size() == static_cast<size_t>(pa.nranks)) return pa.order;
  std::vector<int> m(pa.nranks);
  for (int r = 0; r < pa.nranks; ++r) m[r] = r;
  return m;
}

void hier(Ctx* c, const PatternArgs& pa, uint64_t n, bool crossTree) {
  const std::vector<int> m = positions(pa);
  std::map<int, int> idx;
  std::vector<std::vector<int>> parts;
  for (int r : m) {
    int h = pa.parts.size() == static_cast<size_t>(pa.nranks) ? pa.parts[r] : r;
    auto it = idx.emplace(h, static_cast<int>(parts.size())).first;
    if (it->second == static_cast<int>(parts.size())) parts.emplace_back();
    parts[it->second].push_back(r);
  }
  // L: the largest part; a smaller part's rank q owns indices j = q mod its size (allreduce_hier).
  size_t L = 1;
  for (auto& pt : parts) L = std::max(L, pt.size());
  const uint64_t chunk = pa.args.chunkBytes;
  const uint64_t loops = std::max<uint64_t>(1, ceilDiv(n, chunk * L * parts.size()));
  const uint64_t seg = ceilDiv(n, L * loops);
  // Intra-part rings run in every part at once: merge them into one round per phase.
  auto intra = [&](bool reduce) {
    if (L < 2) return;
    std::vector<Flow> f;
    for (auto& pt : parts)
      for (size_t j = 0; j < pt.size() && pt.size() > 1; ++j)
        f.push_back({pt[j], pt[(j + 1) % pt.size()], seg});
    c->add(std::move(f), (L - 1) * loops, reduce ? seg : 0);
  };
  intra(true);
  if (parts.size() > 1) {
    // L rails in parallel, each an all-reduce of `seg` bytes per loop across the parts.
    std::vector<Round> cross;
    Ctx sub{c->pa, &cross};
    for (size_t j = 0; j < L; ++j) {
      std::vector<Round> one;
      Ctx s1{c->pa, &one};
      std::vector<int> rail;
      for (auto& pt : parts) rail.push_back(pt[j % pt.size()]);
      if (crossTree)
        treeAllReduce(&s1, rail, seg, chunk);
      else
        ringAllReduce(&s1, rail, seg, chunk, true, true);
      if (cross.empty()) {
        cross = one;
      } else {
        for (size_t k = 0; k < cross.size() && k < one.size(); ++k)
          cross[k].flows.insert(cross[k].flows.end(), one[k].flows.begin(), one[k].flows.end());
      }
    }
    (void)sub;
    for (Round& r : cross) {
      r.repeat *= loops;
      c->out->push_back(std::move(r));
    }
  }
  intra(false);
}

}  // namespace

bool hasPattern(CollType coll, const std::string& a) {
  switch (coll) {
    case CollType::kAllReduce:
      return a == "ring" || a == "tree" || a == "rd" || a == "rabenseifner" || a == "hier" ||
             a == "hier_tree" || a == "ring_rail";
    case CollType::kReduceScatter:
      return a == "ring" || a == "halving";
    case CollType::kAllGather:
      return a == "ring" || a == "rd";
    case CollType::kBroadcast:
    case CollType::kReduce:
      return a == "ring" || a == "binomial" || a == "tree";
    default:
      return false;
  }
}

Status patternRounds(const std::string& a, const PatternArgs& pa, std::vector<Round>* out) {
  out->clear();
  Ctx c{pa, out};
  const uint64_t es = dtypeSize(pa.args.dtype), chunk = pa.args.chunkBytes;
  const std::vector<int> m = positions(pa);
  const int p = pa.nranks;
  const CollType coll = pa.args.coll;
  if (!hasPattern(coll, a))
    return invalidArgument("no cost pattern for ", sched::collName(coll), ":", a);
  if (p < 2 || pa.args.count == 0) return Status();
  const uint64_t n = pa.args.count * es;  // allreduce/bcast/reduce total; RS/AG per rank block
  if (coll == CollType::kAllReduce) {
    if (a == "ring")
      ringAllReduce(&c, m, n, chunk, true, true);
    else if (a == "tree")
      treeAllReduce(&c, m, n, chunk);
    else if (a == "rd" || a == "rabenseifner")
      butterfly(&c, m, n, a);
    else if (a == "ring_rail")
      ringRail(&c, pa, n, es, chunk);
    else
      hier(&c, pa, n, a == "hier_tree");
  } else if (coll == CollType::kReduceScatter || coll == CollType::kAllGather) {
    const bool rs = coll == CollType::kReduceScatter;
    if (a == "ring") {
      ringAllReduce(&c, m, n * p, chunk, rs, !rs);
    } else {  // halving / doubling: per step half / double of the window
      algo::Fold fold(p);
      std::vector<Flow> in, back;
      for (int e = 0; e < fold.extra; ++e) {
        in.push_back({m[2 * e], m[2 * e + 1], rs ? n * p : n});
        back.push_back({m[2 * e + 1], m[2 * e], rs ? n : n * p});
      }
      c.add(in, 1, rs ? n * p : 0);
      uint64_t b = rs ? n * p : n;
      for (int k = 1; k < fold.pow2; k *= 2) {
        std::vector<Flow> f;
        int mask = rs ? fold.pow2 / (2 * k) : k;
        b = rs ? b / 2 : b;
        for (int v = 0; v < fold.pow2; ++v)
          f.push_back({m[fold.real(v)], m[fold.real(v ^ mask)], b});
        c.add(std::move(f), 1, rs ? b : 0);
        if (!rs) b *= 2;
      }
      c.add(back, 1, 0);
    }
  } else if (a == "tree") {  // broadcast / reduce over the double binary tree
    treeAllReduce(&c, m, n, chunk, coll == CollType::kReduce, coll == CollType::kBroadcast);
  } else {  // broadcast / reduce
    const bool red = coll == CollType::kReduce;
    const uint64_t chunks = std::max<uint64_t>(1, ceilDiv(n, chunk));
    const uint64_t bytes = ceilDiv(n, chunks);
    const int root = pa.args.root;
    if (a == "ring") {  // chain: every link busy once the pipeline is full
      std::vector<Flow> f;
      for (int r = 0; r < p; ++r)
        if (algo::mod(r - root, p) + 1 < p) f.push_back({m[r], m[algo::mod(r + 1, p)], bytes});
      c.add(std::move(f), chunks + p - 2, red ? bytes : 0);
    } else {  // binomial: the first chunk goes one tree level per round, the rest stream behind
      std::map<int, std::vector<Flow>> byDist;
      std::vector<Flow> all;
      for (int r = 0; r < p; ++r) {
        const int u = algo::mod(r - root, p);
        if (u == 0) continue;
        algo::TreeNode t = algo::binomialNode(r, p, root);
        Flow fl = red ? Flow{m[r], m[t.parent], bytes} : Flow{m[t.parent], m[r], bytes};
        byDist[algo::lowBit(u)].push_back(fl);
        all.push_back(fl);
      }
      if (red) {
        for (auto& [d, f] : byDist) c.add(f, 1, bytes);
      } else {
        for (auto it = byDist.rbegin(); it != byDist.rend(); ++it) c.add(it->second, 1, 0);
      }
      // Steady state: the root takes (reduce) or gives (broadcast) one chunk per subtree.
      c.add(std::move(all), chunks - 1, red ? bytes * byDist.size() : 0);
    }
  }
  return Status();
}

}  // namespace loom::plan
