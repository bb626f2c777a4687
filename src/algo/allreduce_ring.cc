// Ring all-reduce: reduce-scatter then all-gather around the ring r -> r+1.
// The buffer is cut into loops of about p * chunkBytes, each loop into p segments. In step s of
// the reduce-scatter rank r sends segment (r - s) and reduces the incoming segment (r - s - 1)
// into its receive buffer; after p-1 steps it owns the fully reduced segment (r + 1), and the
// all-gather passes finished segments on for p-1 more steps. Steps are ordered step-major
// (all loops of step s, then step s+1), the same order on every rank, so loop L+1 streams while
// loop L waits for its reduction: the ring is pipelined. Each rank sends and receives
// 2 (p-1)/p * N bytes: cost 2 (p-1) alpha + 2 (p-1)/p * N beta + (p-1)/p * N gamma.
#include "algo/partition.h"
#include "algo/registry.h"

namespace loom::algo {

Status buildAllReduceRing(const CollArgs& a, const Group& g, Schedule* out) {
  using sched::BufRef;
  using sched::kBufRecv;
  using sched::kBufSend;
  const int p = g.nranks, r = g.rank;
  const uint64_t es = dtypeSize(a.dtype);
  startSchedule(g, "ring", out);
  if (a.count == 0) return Status();
  if (p == 1) {
    if (!a.inPlace) out->copy({kBufSend, 0}, {kBufRecv, 0}, a.count * es);
    return Status();
  }
  const int next = mod(r + 1, p), prev = mod(r - 1, p);
  const uint64_t loops = loopsFor(a.count, es, a.chunkBytes * p);
  auto seg = [&](uint64_t loop, int k) {
    Range l = piece(a.count, loops, loop);
    Range s = piece(l.count, p, mod(k, p));
    return Range{l.first + s.first, s.count};
  };
  // Per loop: index of the previous step's receive (to chain sends) and of each RS send.
  std::vector<int> lastRecv(loops, -1);
  std::vector<std::vector<int>> rsSend(loops, std::vector<int>(p - 1, -1));
  for (int s = 0; s < p - 1; ++s) {
    for (uint64_t L = 0; L < loops; ++L) {
      Range sg = seg(L, r - s);
      uint16_t srcBuf = s == 0 ? kBufSend : kBufRecv;
      rsSend[L][s] = out->send(next, {srcBuf, sg.first * es}, sg.count * es, {lastRecv[L]});
      Range rg = seg(L, r - s - 1);
      lastRecv[L] = out->recvReduce(prev, {kBufSend, rg.first * es}, {kBufRecv, rg.first * es},
                                    rg.count * es);
    }
  }
  for (int s = 0; s < p - 1; ++s) {
    for (uint64_t L = 0; L < loops; ++L) {
      Range sg = seg(L, r + 1 - s);
      int sent = out->send(next, {kBufRecv, sg.first * es}, sg.count * es, {lastRecv[L]});
      (void)sent;
      Range rg = seg(L, r - s);
      // The region we overwrite was read by reduce-scatter send s (and, in place, is the input).
      lastRecv[L] = out->recv(prev, {kBufRecv, rg.first * es}, rg.count * es, {rsSend[L][s]});
    }
  }
  return Status();
}

}  // namespace loom::algo
