// Hierarchical all-reduce, composed over a partition of the ranks into "nodes" (Group::hostOf; the
// planner may pass a leaf-switch or Dragonfly+ group partition instead, the builder only sees
// parts). With L = the smallest part size and N parts:
//   1. ring reduce-scatter inside each part: local rank j ends owning block j of every loop;
//   2. all-reduce of block j across parts among the ranks with local index j (L independent
//      all-reduces in parallel, "rail-aligned"), built by a flat builder (ring or double tree) for
//      the subgroup and embedded;
//   3. ring all-gather inside each part.
// Ranks beyond the first L of a part fold: they hand their input to local rank (index mod L)
// first and receive the result last. Loops of about L * parts * chunkBytes pipeline the phases.
// Cost: 2(L-1) alpha_in + 2(L-1)/L N beta_in + T_allreduce(N parts, N/L bytes) across parts: a part
// sends 2(N-1)/N N bytes off-part in total, spread over its L ranks (and their NICs).
#include <algorithm>
#include <map>

#include "algo/partition.h"
#include "algo/registry.h"
#include "algo/step_util.h"

namespace loom::algo {
namespace {

struct Parts {
  std::vector<std::vector<int>> members;  // per part, ranks ascending
  int part = 0, local = 0, L = 0;
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
  out.L = g.nranks;
  for (int sz : sizes) out.L = std::min(out.L, sz);
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

Status buildHier(const CollArgs& a, const Group& g, Builder cross, const char* name,
                 Schedule* out) {
  using sched::kBufRecv;
  using sched::kBufSend;
  const int r = g.rank;
  const uint64_t es = dtypeSize(a.dtype), n = a.count * es;
  startSchedule(g, name, out);
  if (a.count == 0) return Status();
  if (g.nranks == 1) {
    if (!a.inPlace) out->copy({kBufSend, 0}, {kBufRecv, 0}, n);
    return Status();
  }
  const Parts P = partsOf(g);
  const std::vector<int>& mine = P.members[P.part];
  const int L = P.L, j = P.local % L;
  if (P.local >= L) {  // fold: hand the input to local rank j, get the result back
    int s = out->send(mine[j], {kBufSend, 0}, n);
    out->recv(mine[j], {kBufRecv, 0}, n, {s});
    return Status();
  }
  uint16_t cur = a.inPlace ? kBufRecv : kBufSend;
  int fold = -1;
  for (size_t e = L + j; e < mine.size(); e += L) {
    fold = out->recvReduce(mine[e], {cur, 0}, {kBufRecv, 0}, n, {fold});
    cur = kBufRecv;
  }
  if (L == 1 && fold < 0 && !a.inPlace) fold = out->copy({kBufSend, 0}, {kBufRecv, 0}, n);
  const int next = mine[mod(j + 1, L)], prev = mine[mod(j - 1, L)];
  // One loop per L x parts x chunkBytes: each loop's cross-part all-reduce then moves about one
  // chunk per message, so the cross phase costs what one flat pipelined all-reduce would and
  // not (loops x its latency).
  const uint64_t loops = loopsFor(a.count, es, a.chunkBytes * L * P.members.size());
  auto seg = [&](uint64_t loop, int k) {
    Range l = piece(a.count, loops, loop);
    Range s = piece(l.count, L, mod(k, L));
    return Range{l.first + s.first, s.count};
  };
  // 1. Reduce-scatter inside the part: after L-1 steps local rank j owns segment j of each loop.
  std::vector<int> lastRecv(loops, fold);
  std::vector<std::vector<int>> rsSend(loops, std::vector<int>(L, -1));
  for (int s = 0; s + 1 < L; ++s) {
    for (uint64_t l = 0; l < loops; ++l) {
      Range sg = seg(l, j - s - 1), rg = seg(l, j - s - 2);
      if (sg.count)
        rsSend[l][s] =
            out->send(next, {s == 0 ? cur : kBufRecv, sg.first * es}, sg.count * es, {lastRecv[l]});
      if (rg.count)
        lastRecv[l] = out->recvReduce(prev, {cur, rg.first * es}, {kBufRecv, rg.first * es},
                                      rg.count * es, {lastRecv[l], fold});
    }
  }
  // 2. All-reduce of segment j across parts, among the ranks with local index j.
  std::vector<int> rail;
  int railRank = 0;
  for (const auto& m : P.members) {
    if (m[j] == r) railRank = static_cast<int>(rail.size());
    rail.push_back(m[j]);
  }
  std::vector<int> done(loops);
  for (uint64_t l = 0; l < loops; ++l) {
    done[l] = lastRecv[l];
    Range sg = seg(l, j);
    if (rail.size() < 2 || sg.count == 0) continue;
    CollArgs sub = a;
    sub.count = sg.count;
    sub.inPlace = true;
    Schedule subSched;
    LOOM_CHECK(cross(sub, Group{railRank, static_cast<int>(rail.size()), {}}, &subSched));
    done[l] = embed(out, subSched, rail, sg.first * es, lastRecv[l]);
  }
  // 3. All-gather inside the part.
  std::vector<int> finals(done);
  for (int s = 0; s + 1 < L; ++s) {
    for (uint64_t l = 0; l < loops; ++l) {
      Range sg = seg(l, j - s), rg = seg(l, j - s - 1);
      if (sg.count) out->send(next, {kBufRecv, sg.first * es}, sg.count * es, {done[l]});
      if (rg.count) {
        done[l] = out->recv(prev, {kBufRecv, rg.first * es}, rg.count * es, {rsSend[l][s]});
        finals.push_back(done[l]);
      }
    }
  }
  if (mine.size() > static_cast<size_t>(L)) {
    const int all = joinSteps(out, finals);
    for (size_t e = L + j; e < mine.size(); e += L) out->send(mine[e], {kBufRecv, 0}, n, {all});
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
