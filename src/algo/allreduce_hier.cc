// Hierarchical all-reduce, composed over a partition of the ranks into "nodes" (Group::hostOf; the
// planner may pass a leaf-switch or Dragonfly+ group partition instead, the builder only sees
// parts). With L = the largest part size and N parts, every part splits each loop into L
// segments ("virtual local indices"); in a part of m ranks, rank i owns indices j = i mod m:
//   1. ring reduce-scatter inside each part, in ceil(L/m) groups of m indices: rank i ends owning
//      its indices of every loop (one group, the plain ring, when m = L);
//   2. all-reduce of index j across parts among the ranks that own it (L independent all-reduces
//      in parallel, "rail-aligned" when parts are hosts), built by a flat builder (ring or double
//      tree) for the subgroup and embedded;
//   3. ring all-gather inside each part, group by group.
// A partly filled part (a last host with 2 of 22 ranks, a last leaf with 4 of 8 hosts) thus keeps
// L rails: its ranks carry several each, instead of every part shrinking to its size (the earlier
// fold to the smallest part cost 10-30x). Loops of about L * parts * chunkBytes pipeline the
// phases.
// Cost: 2(L-1) alpha_in + 2(L-1)/L N beta_in + T_allreduce(N parts, N/L bytes) across parts: a part
// sends 2(N-1)/N N bytes off-part in total, spread over its ranks (and their NICs).
#include <algorithm>
#include <map>

#include "algo/partition.h"
#include "algo/registry.h"
#include "algo/step_util.h"

namespace loom::algo {
namespace {

struct Parts {
  std::vector<std::vector<int>> members;  // per part, ranks ascending
  int part = 0, local = 0, L = 0;         // L: ranks of the largest part
};

Parts partsOf(const Group& g) {
  Parts out;
  // Part of each rank, numbered in order of first appearance (a simulator builds every rank of
  // 65,536: one pass, no tree of hosts, no vector growing).
  const bool byHost = g.hostOf.size() == static_cast<size_t>(g.nranks);
  std::vector<int> partOf(g.nranks), first(g.nranks, -1);  // host id in 0..nranks-1 -> part
  std::map<int, int> other;                                // any other host id -> part
  std::vector<int> sizes;
  for (int q = 0; q < g.nranks; ++q) {
    const int h = byHost ? g.hostOf[q] : q;
    int* slot = h >= 0 && h < g.nranks ? &first[h] : &other.emplace(h, -1).first->second;
    if (*slot < 0) {
      *slot = static_cast<int>(sizes.size());
      sizes.push_back(0);
    }
    partOf[q] = *slot;
    if (q == g.rank) {
      out.part = *slot;
      out.local = sizes[*slot];
    }
    ++sizes[*slot];
  }
  out.members.resize(sizes.size());
  for (size_t k = 0; k < sizes.size(); ++k) out.members[k].reserve(sizes[k]);
  for (int q = 0; q < g.nranks; ++q) out.members[partOf[q]].push_back(q);
  out.L = 1;
  for (int sz : sizes) out.L = std::max(out.L, sz);
  return out;
}

// Appends `sub` (built for a subgroup, in place) so that its peers map through `members`, its
// send/recv slots become the receive buffer at byte `base`, and its first steps wait for `after`.
// Returns a join of all appended steps.
int embed(Schedule* out, const Schedule& sub, const std::vector<int>& members, uint64_t base,
          int after) {
  const int first = static_cast<int>(out->steps.size());
  const uint64_t scratchBase = out->scratchBytes;
  std::vector<int> all;
  for (const sched::Step& s0 : sub.steps) {
    sched::Step s = s0;
    if (s.peer >= 0) s.peer = members[s.peer];
    for (sched::BufRef* b : {&s.src, &s.dst}) {
      if (b->buf == sched::kBufScratch) {
        b->offset += scratchBase;
      } else {
        b->buf = sched::kBufRecv;
        b->offset += base;
      }
    }
    std::vector<int> deps;
    for (uint32_t k = 0; k < s0.depCount; ++k) deps.push_back(first + sub.deps[s0.depBegin + k]);
    if (deps.empty()) deps.push_back(after);
    all.push_back(out->add(s, deps));
  }
  out->scratchBytes += sub.scratchBytes;
  all.push_back(after);
  return joinSteps(out, all);
}

// Segment of loop `l` with virtual local index `idx` (empty beyond L).
struct Segs {
  uint64_t count, loops;
  int L;
  Range at(uint64_t l, int idx) const {
    if (idx < 0 || idx >= L) return Range{0, 0};
    Range lr = piece(count, loops, l);
    Range s = piece(lr.count, L, idx);
    return Range{lr.first + s.first, s.count};
  }
};

// Phase 1 for group k of a part of m ranks (virtual indices k*m .. k*m+m-1): ring reduce-scatter
// among the part's ranks; this rank (position i) ends owning index k*m + i of every loop.
void reduceScatterGroup(Schedule* out, const Segs& sg, int k, int i, int m, int next, int prev,
                        uint16_t cur, uint64_t es, std::vector<int>* lastRecv,
                        std::vector<std::vector<int>>* rsSend) {
  using sched::kBufRecv;
  auto idx = [&](int q) { return k * m + mod(q, m); };
  for (int s = 0; s + 1 < m; ++s) {
    for (uint64_t l = 0; l < sg.loops; ++l) {
      Range a = sg.at(l, idx(i - s - 1)), b = sg.at(l, idx(i - s - 2));
      if (a.count)
        (*rsSend)[l][s] = out->send(next, {s == 0 ? cur : kBufRecv, a.first * es}, a.count * es,
                                    {(*lastRecv)[l]});
      if (b.count)
        (*lastRecv)[l] = out->recvReduce(prev, {cur, b.first * es}, {kBufRecv, b.first * es},
                                         b.count * es, {(*lastRecv)[l]});
    }
  }
}

Status buildHier(const CollArgs& a, const Group& g, Builder cross, const char* name,
                 Schedule* out) {
  using sched::kBufRecv;
  using sched::kBufSend;
  const uint64_t es = dtypeSize(a.dtype), n = a.count * es;
  startSchedule(g, name, out);
  if (a.count == 0) return Status();
  if (g.nranks == 1) {
    if (!a.inPlace) out->copy({kBufSend, 0}, {kBufRecv, 0}, n);
    return Status();
  }
  const Parts P = partsOf(g);
  const std::vector<int>& mine = P.members[P.part];
  const int L = P.L, m = static_cast<int>(mine.size()), i = P.local;
  const uint16_t cur = a.inPlace ? kBufRecv : kBufSend;
  int start = -1;
  if (m == 1 && !a.inPlace) start = out->copy({kBufSend, 0}, {kBufRecv, 0}, n);
  const int next = mine[mod(i + 1, m)], prev = mine[mod(i - 1, m)];
  // One loop per L x parts x chunkBytes: each loop's cross-part all-reduce then moves about one
  // chunk per message, so the cross phase costs what one flat pipelined all-reduce would and
  // not (loops x its latency).
  const Segs sg{a.count, loopsFor(a.count, es, a.chunkBytes * L * P.members.size()), L};
  const int groups = (L + m - 1) / m;
  std::vector<std::vector<int>> done(groups, std::vector<int>(sg.loops, start));
  std::vector<std::vector<std::vector<int>>> rsSend(
      groups, std::vector<std::vector<int>>(sg.loops, std::vector<int>(m, -1)));
  // 1. Reduce-scatter inside the part, group by group.
  for (int k = 0; k < groups; ++k)
    reduceScatterGroup(out, sg, k, i, m, next, prev, cur, es, &done[k], &rsSend[k]);
  // 2. All-reduce of each owned index j across parts, among the ranks that own j in their part
  //    (rank j mod size of every part: one per part).
  for (int k = 0; k < groups; ++k) {
    const int j = k * m + i;
    if (j >= L) continue;
    std::vector<int> rail;
    int railRank = 0;
    for (size_t q = 0; q < P.members.size(); ++q) {
      const std::vector<int>& pm = P.members[q];
      if (static_cast<int>(q) == P.part) railRank = static_cast<int>(rail.size());
      rail.push_back(pm[j % pm.size()]);
    }
    for (uint64_t l = 0; l < sg.loops; ++l) {
      Range r = sg.at(l, j);
      if (rail.size() < 2 || r.count == 0) continue;
      CollArgs sub = a;
      sub.count = r.count;
      sub.inPlace = true;
      Schedule subSched;
      LOOM_CHECK(cross(sub, Group{railRank, static_cast<int>(rail.size()), {}}, &subSched));
      done[k][l] = embed(out, subSched, rail, r.first * es, done[k][l]);
    }
  }
  // 3. All-gather inside the part, group by group.
  for (int k = 0; k < groups; ++k) {
    auto idx = [&](int q) { return k * m + mod(q, m); };
    for (int s = 0; s + 1 < m; ++s) {
      for (uint64_t l = 0; l < sg.loops; ++l) {
        Range x = sg.at(l, idx(i - s)), y = sg.at(l, idx(i - s - 1));
        if (x.count) out->send(next, {kBufRecv, x.first * es}, x.count * es, {done[k][l]});
        if (y.count)
          done[k][l] = out->recv(prev, {kBufRecv, y.first * es}, y.count * es, {rsSend[k][l][s]});
      }
    }
  }
  return Status();
}

}  // namespace

Status buildAllReduceHier(const CollArgs& a, const Group& g, Schedule* out) {
  return buildHier(a, g, &buildAllReduceRing, "hier", out);
}

Status buildAllReduceHierTree(const CollArgs& a, const Group& g, Schedule* out) {
  return buildHier(a, g, &buildAllReduceTree, "hier_tree", out);
}

}  // namespace loom::algo
