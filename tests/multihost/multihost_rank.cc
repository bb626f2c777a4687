// One rank of the two-host test. Rank 0 makes the id and writes it to $ID_FILE; the others wait
// for the file and join with loomCommInitFromEnv (LOOM_COMM_ID=@file, LOOM_RANK, LOOM_NRANKS).
// Checks all-reduce, all-gather and broadcast results and prints which transport reached whom.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "id_file.h"
#include "loom/loom.h"

#define CHECK(call)                                                                      \
  do {                                                                                   \
    loomResult_t r_ = (call);                                                            \
    if (r_ != loomSuccess) {                                                             \
      std::fprintf(stderr, "rank %d: %s: %s\n", rank, #call, loomGetLastError(nullptr)); \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

int main() {
  int rank = std::atoi(std::getenv("LOOM_RANK"));
  const char* idFile = std::getenv("ID_FILE");
  CHECK(shareUniqueIdFile(rank, idFile));
  loomComm_t comm;
  CHECK(loomCommInitFromEnv(&comm));
  int p = 0;
  CHECK(loomCommCount(comm, &p));
  const size_t n = 1 << 20;
  std::vector<int> a(n), b(n), g(p * 1000);
  for (size_t i = 0; i < n; ++i) a[i] = rank * 3 + static_cast<int>(i % 97);
  CHECK(loomAllReduce(a.data(), b.data(), n, loomInt32, loomSum, comm, nullptr));
  long wrong = 0;
  for (size_t i = 0; i < n; ++i)
    wrong += b[i] != 3 * p * (p - 1) / 2 + p * static_cast<int>(i % 97);
  std::vector<int> mine(1000, rank);
  CHECK(loomAllGather(mine.data(), g.data(), 1000, loomInt32, comm, nullptr));
  for (int i = 0; i < p * 1000; ++i) wrong += g[i] != i / 1000;
  CHECK(loomBroadcast(a.data(), a.data(), n, loomInt32, p - 1, comm, nullptr));
  for (size_t i = 0; i < n; ++i) wrong += a[i] != (p - 1) * 3 + static_cast<int>(i % 97);
  char host[64] = {0};
  gethostname(host, sizeof(host) - 1);
  std::printf("rank %d on %s: %s (%ld wrong)\n", rank, host, wrong ? "WRONG" : "ok", wrong);
  // LATENCY_ITERS=N: the mean time of N blocking 8-byte all-reduces (after N/4 warm-up calls).
  if (const char* it = std::getenv("LATENCY_ITERS")) {
    const int iters = std::max(1, std::atoi(it));
    float x[2] = {1, 2}, y[2];
    for (int i = 0; i < iters / 4; ++i)
      CHECK(loomAllReduce(x, y, 2, loomFloat32, loomSum, comm, 0));
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) CHECK(loomAllReduce(x, y, 2, loomFloat32, loomSum, comm, 0));
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    std::printf("rank %d latency %.1f us\n", rank, us / iters);
  }
  CHECK(loomCommDestroy(comm));
  return wrong ? 1 : 0;
}
