// One rank of the two-host fault test (run_netns_partition.sh): all-reduces until the link between
// the two namespaced hosts is cut or a rank is killed or stopped, then reports how long the error
// took and which ranks it named, agrees on the failed set, shrinks to the ranks of its own host and
// checks an all-reduce there. Prints "rank R: running" once in the loop, and "rank R: detected S s
// failed F; shrunk to N ok" at the end.
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "id_file.h"
#include "loom/loom.h"

namespace {
double now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
}  // namespace

int main() {
  const int rank = std::atoi(std::getenv("LOOM_RANK"));
  if (shareUniqueIdFile(rank, std::getenv("ID_FILE")) != loomSuccess) return 1;
  loomComm_t comm;
  if (loomCommInitFromEnv(&comm) != loomSuccess) {
    std::printf("rank %d: init: %s\n", rank, loomGetLastError(nullptr));
    return 1;
  }
  std::vector<float> buf(1 << 16, 1.0f);
  std::printf("rank %d: running pid %d\n", rank, static_cast<int>(getpid()));
  std::fflush(stdout);
  double lastOk = now();
  loomResult_t r;
  while ((r = loomAllReduce(buf.data(), buf.data(), buf.size(), loomFloat32, loomSum, comm,
                            nullptr)) == loomSuccess) {
    lastOk = now();
    for (float& x : buf) x = 1.0f;
  }
  const double detected = now() - lastOk;
  std::printf("rank %d: %s after %.2f s: %s\n", rank, loomGetErrorString(r), detected,
              loomGetLastError(comm));
  int failed[16], n = 0;
  if (loomCommAgreeFailedRanks(comm, failed, 16, &n) != loomSuccess) {
    std::printf("rank %d: agree: %s\n", rank, loomGetLastError(comm));
    return 1;
  }
  std::string names;
  int want = 0 + 1 + 2 + 3;  // the sum of the old ranks that remain
  for (int i = 0; i < n && i < 16; ++i) {
    names += std::to_string(failed[i]) + ",";
    want -= failed[i];
  }
  loomComm_t mine = nullptr;
  if (loomCommShrink(comm, nullptr, 0, &mine) != loomSuccess) {
    std::printf("rank %d: shrink: %s\n", rank, loomGetLastError(comm));
    return 1;
  }
  int size = 0;
  loomCommCount(mine, &size);
  int x = rank, sum = 0;
  if (loomAllReduce(&x, &sum, 1, loomInt32, loomSum, mine, nullptr) != loomSuccess) return 1;
  const bool ok = sum == want;
  std::printf("rank %d: detected %.2f s failed %s shrunk to %d %s\n", rank, detected, names.c_str(),
              size, ok ? "ok" : "WRONG");
  loomCommDestroy(mine);
  loomCommDestroy(comm);
  return ok ? 0 : 1;
}
