// Pairwise all-to-all-v: the rounds of alltoall_pairwise (round k: send to r + k, receive from
// r - k), with each peer's block at its own count and displacement (MPI_Alltoallv layout, in
// elements). Empty blocks are skipped on both sides, which agree because rank a's sendcount for b
// must equal b's recvcount for a. The own block is a local copy. Cost (p-1) alpha + max(sent,
// received) beta per rank.
#include "algo/partition.h"
#include "algo/registry.h"

namespace loom::algo {

Status buildAllToAllvPairwise(const CollArgs& a, const Group& g, Schedule* out) {
  using sched::kBufRecv;
  using sched::kBufSend;
  const int p = g.nranks, r = g.rank;
  const uint64_t es = dtypeSize(a.dtype);
  startSchedule(g, "pairwise", out);
  if (a.vcounts == nullptr) return invalidArgument("alltoallv: no counts");
  const uint64_t* sendCounts = a.vcounts;
  const uint64_t* sendDispls = a.vcounts + p;
  const uint64_t* recvCounts = a.vcounts + 2 * p;
  const uint64_t* recvDispls = a.vcounts + 3 * p;
  if (sendCounts[r] != recvCounts[r])
    return invalidArgument("alltoallv: rank ", r, " sends ", sendCounts[r],
                           " elements to itself but expects ", recvCounts[r]);
  if (sendCounts[r] > 0)
    out->copy({kBufSend, sendDispls[r] * es}, {kBufRecv, recvDispls[r] * es}, sendCounts[r] * es);
  for (int k = 1; k < p; ++k) {
    const int to = mod(r + k, p), from = mod(r - k, p);
    if (sendCounts[to] > 0) out->send(to, {kBufSend, sendDispls[to] * es}, sendCounts[to] * es);
    if (recvCounts[from] > 0)
      out->recv(from, {kBufRecv, recvDispls[from] * es}, recvCounts[from] * es);
  }
  return Status();
}

}  // namespace loom::algo
