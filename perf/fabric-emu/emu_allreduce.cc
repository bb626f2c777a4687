// emu_allreduce: one rank of the emulated-fabric all-reduce benchmark (perf/fabric-emu/run.sh
// starts one per network namespace). Rank 0 makes the unique id and writes it to $ID_FILE, the
// others wait for the file; all join with loomCommInitFromEnv (LOOM_RANK, LOOM_NRANKS). The plan
// comes from the environment (LOOM_ALGO, LOOM_TOPO_FILE), as for any loom program.
//   emu_allreduce SIZE[,SIZE...] ITERS     e.g. emu_allreduce 1m,4m,16m 3
// For every size: one warm-up call whose float32 sum is checked exactly, then ITERS timed calls
// between barriers. Rank 0 prints one line per size with the slowest rank's mean time:
//   size <bytes> time_us <t> algbw_GBps <a> busbw_GBps <b> wrong <n>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "id_file.h"  // tests/multihost: rank 0 shares the unique id in a file
#include "loom/loom.h"

namespace {

int gRank = -1;

bool ok(loomResult_t r, const char* what) {
  if (r == loomSuccess) return true;
  std::fprintf(stderr, "emu_allreduce rank %d: %s: %s\n", gRank, what, loomGetLastError(nullptr));
  return false;
}

bool parseSizes(const char* text, std::vector<size_t>* out) {
  std::string s(text);
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    std::string item =
        s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    char* end = nullptr;
    unsigned long long v = std::strtoull(item.c_str(), &end, 10);
    size_t mul = 1;
    if (*end == 'k' || *end == 'K') mul = 1 << 10, ++end;
    if (*end == 'm' || *end == 'M') mul = 1 << 20, ++end;
    if (end == item.c_str() || *end != '\0' || v == 0) {
      std::fprintf(stderr, "emu_allreduce: bad size '%s' in SIZES '%s'\n", item.c_str(), text);
      return false;
    }
    out->push_back(v * mul);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return true;
}

bool joinComm(loomComm_t* comm) {
  const char* idFile = std::getenv("ID_FILE");
  if (!idFile) {
    std::fprintf(stderr, "emu_allreduce: ID_FILE is not set\n");
    return false;
  }
  return ok(shareUniqueIdFile(gRank, idFile), "unique id file") &&
         ok(loomCommInitFromEnv(comm), "loomCommInitFromEnv");
}

}  // namespace

int main(int argc, char** argv) {
  const char* rankText = std::getenv("LOOM_RANK");
  std::vector<size_t> sizes;
  if (argc != 3 || !rankText || !parseSizes(argv[1], &sizes) || std::atoi(argv[2]) < 1) {
    std::fprintf(stderr, "usage: LOOM_RANK=r LOOM_NRANKS=n ID_FILE=f %s SIZE[,SIZE...] ITERS\n",
                 argv[0]);
    return 2;
  }
  gRank = std::atoi(rankText);
  const int iters = std::atoi(argv[2]);
  loomComm_t comm;
  if (!joinComm(&comm)) return 1;
  int p = 1;
  if (!ok(loomCommCount(comm, &p), "loomCommCount")) return 1;
  long wrongAll = 0;
  for (size_t bytes : sizes) {
    const size_t n = bytes / sizeof(float);
    std::vector<float> a(n), b(n);
    for (size_t i = 0; i < n; ++i) a[i] = static_cast<float>(gRank + i % 13);
    if (!ok(loomAllReduce(a.data(), b.data(), n, loomFloat32, loomSum, comm, nullptr), "warm-up"))
      return 1;
    // Small integers: the sum is exact in float32 whatever the reduction order.
    double wrong = 0;
    for (size_t i = 0; i < n; ++i)
      wrong += b[i] != static_cast<float>(p * (p - 1) / 2 + p * static_cast<int>(i % 13));
    if (!ok(loomBarrier(comm, nullptr), "barrier")) return 1;
    auto t0 = std::chrono::steady_clock::now();
    for (int it = 0; it < iters; ++it)
      if (!ok(loomAllReduce(a.data(), b.data(), n, loomFloat32, loomSum, comm, nullptr), "timed"))
        return 1;
    double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double mine[2] = {sec / iters, wrong}, worst[2];
    if (!ok(loomAllReduce(mine, worst, 1, loomFloat64, loomMax, comm, nullptr), "time max") ||
        !ok(loomAllReduce(mine + 1, worst + 1, 1, loomFloat64, loomSum, comm, nullptr), "wrong"))
      return 1;
    wrongAll += static_cast<long>(worst[1]);
    if (gRank == 0) {
      const double alg = bytes / worst[0] / 1e9;
      std::printf("size %zu time_us %.1f algbw_GBps %.5f busbw_GBps %.5f wrong %ld\n", bytes,
                  worst[0] * 1e6, alg, alg * 2.0 * (p - 1) / p, static_cast<long>(worst[1]));
      std::fflush(stdout);
    }
  }
  if (!ok(loomCommDestroy(comm), "loomCommDestroy")) return 1;
  return wrongAll ? 1 : 0;
}
