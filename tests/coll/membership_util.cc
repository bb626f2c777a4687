#include "coll/membership_util.h"

#include <dirent.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "coll/expect.h"

namespace loom::testing {

namespace {

// Gather and scatter of int32 rank-tagged blocks, checked exactly.
std::string gatherScatter(loomComm_t comm, int rank, int p, uint64_t n) {
  const int root = p - 1;
  std::vector<int32_t> mine(n), all(n * p, -1);
  for (uint64_t i = 0; i < n; ++i) mine[i] = static_cast<int32_t>(rank * 1000003 + i);
  LOOM_TRY(loomGather(mine.data(), all.data(), n, loomInt32, root, comm, nullptr));
  if (rank == root)
    for (int r = 0; r < p; ++r)
      for (uint64_t i = 0; i < n; ++i)
        if (all[r * n + i] != static_cast<int32_t>(r * 1000003 + i))
          return "gather: block " + std::to_string(r) + " element " + std::to_string(i);
  for (int r = 0; r < p; ++r)
    for (uint64_t i = 0; i < n; ++i) all[r * n + i] = static_cast<int32_t>(r * 7 + i);
  std::vector<int32_t> got(n, -1);
  LOOM_TRY(loomScatter(all.data(), got.data(), n, loomInt32, root, comm, nullptr));
  for (uint64_t i = 0; i < n; ++i)
    if (got[i] != static_cast<int32_t>(rank * 7 + i))
      return "scatter: element " + std::to_string(i);
  return "";
}

}  // namespace

std::string everyCollective(loomComm_t comm, int rank, int p) {
  for (uint64_t n : {uint64_t{7}, uint64_t{70001}}) {
    std::string e;
    if (!(e = allReduce(comm, rank, p, n, loomFloat32, loomSum, false)).empty()) return e;
    if (!(e = allReduce(comm, rank, p, n, loomInt32, loomMax, true)).empty()) return e;
    if (!(e = broadcast(comm, rank, p, n, false)).empty()) return e;
    if (!(e = reduce(comm, rank, p, n, false)).empty()) return e;
    if (!(e = allGather(comm, rank, p, n, false)).empty()) return e;
    if (!(e = reduceScatter(comm, rank, p, n, false)).empty()) return e;
    if (!(e = allToAll(comm, rank, p, n)).empty()) return e;
    if (!(e = sendRecvRing(comm, rank, p, n)).empty()) return e;
    if (!(e = gatherScatter(comm, rank, p, n)).empty()) return e;
  }
  LOOM_TRY(loomBarrier(comm, nullptr));
  return "";
}

loomResult_t allReduceUntilError(loomComm_t comm, size_t floats, int maxIters,
                                 std::chrono::steady_clock::time_point t0, double* seconds) {
  std::vector<float> buf(floats, 1.0f);
  for (int i = 0; i < maxIters; ++i) {
    loomResult_t r =
        loomAllReduce(buf.data(), buf.data(), buf.size(), loomFloat32, loomSum, comm, nullptr);
    if (r != loomSuccess) {
      *seconds = secondsSince(t0);
      return r;
    }
    for (float& x : buf) x = 1.0f;
  }
  *seconds = secondsSince(t0);
  return loomSuccess;
}

std::string failedRanksAre(loomComm_t comm, const std::vector<int>& want, bool agree) {
  int ranks[64] = {0};
  int n = -1;
  loomResult_t r = agree ? loomCommAgreeFailedRanks(comm, ranks, 64, &n)
                         : loomCommGetFailedRanks(comm, ranks, 64, &n);
  if (r != loomSuccess)
    return std::string(agree ? "agree" : "get") + " failed ranks: " + loomGetErrorString(r) + ": " +
           loomGetLastError(comm);
  std::vector<int> got(ranks, ranks + std::min(n, 64));
  if (got == want) return "";
  std::string g, w;
  for (int x : got) g += std::to_string(x) + " ";
  for (int x : want) w += std::to_string(x) + " ";
  return "failed ranks [" + g + "], expected [" + w + "]";
}

std::set<std::string> loomShmSegments() {
  std::set<std::string> names;
  DIR* d = opendir("/dev/shm");
  if (d == nullptr) return names;
  while (dirent* e = readdir(d))
    if (std::strncmp(e->d_name, "loom", 4) == 0) names.insert(e->d_name);
  closedir(d);
  return names;
}

std::string leftoverSegments(const std::set<std::string>& before) {
  std::string left;
  for (int i = 0; i < 60; ++i) {
    left.clear();
    for (const std::string& n : loomShmSegments())
      if (!before.count(n)) left += n + " ";
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return left;
}

}  // namespace loom::testing
