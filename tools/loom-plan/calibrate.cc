// Calibration: fork two ranks, run a forced recursive-doubling all-reduce (one message each way
// per call) at 8 B and at 4 MiB over shm and over tcp, and fit alpha (the 8 B time, less the
// executor's own overhead is not separated: alpha is "per message, all in") and beta from the
// difference. The local reduction rate is timed directly on the CPU kernels.
#include "calibrate.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

#include "kernels/reduce.h"
#include "loom/loom.h"

namespace loomplan {
namespace {

using Clock = std::chrono::steady_clock;

// Child: runs `iters` all-reduces of `bytes` and writes the median seconds to `fd` (rank 0).
int child(int rank, loomUniqueId id, const char* transport, size_t bytes, int fd) {
  loomConfig_t cfg = LOOM_CONFIG_INITIALIZER;
  cfg.transport = transport;
  loomComm_t comm;
  if (loomCommInitRankConfig(&comm, 2, id, rank, &cfg) != loomSuccess) return 2;
  std::vector<float> a(bytes / 4 + 1, 1.0f), b(a.size());
  const int iters = bytes > 65536 ? 20 : 200;
  std::vector<double> t;
  for (int i = 0; i < iters + 5; ++i) {
    auto t0 = Clock::now();
    if (loomAllReduce(a.data(), b.data(), bytes / 4, loomFloat32, loomSum, comm, nullptr) !=
        loomSuccess)
      return 3;
    if (i >= 5) t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  loomCommDestroy(comm);
  std::sort(t.begin(), t.end());
  double med = t[t.size() / 2];
  if (rank == 0 && write(fd, &med, sizeof med) != sizeof med) return 4;
  return 0;
}

loom::Status measure(const char* transport, size_t bytes, double* sec) {
  loomUniqueId id;
  if (loomGetUniqueId(&id) != loomSuccess) return loom::systemError("loomGetUniqueId failed");
  int fds[2];
  if (pipe(fds) != 0) return loom::errnoStatus("pipe", errno);
  pid_t pids[2];
  for (int r = 0; r < 2; ++r) {
    pids[r] = fork();
    if (pids[r] == 0) _exit(child(r, id, transport, bytes, fds[1]));
  }
  close(fds[1]);
  int bad = 0;
  for (pid_t p : pids) {
    int st = 0;
    waitpid(p, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) bad = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  ssize_t n = read(fds[0], sec, sizeof *sec);
  close(fds[0]);
  if (bad || n != sizeof *sec)
    return loom::systemError("calibration run over ", transport, " failed (child status ", bad,
                             ")");
  return loom::Status();
}

}  // namespace

loom::Status calibrate(loom::plan::CostParams* out) {
  setenv("LOOM_ALGO", "allreduce:rd", 1);
  const size_t big = 4 << 20;
  for (const char* tr : {"shm", "tcp"}) {
    double small = 0, large = 0;
    LOOM_CHECK(measure(tr, 8, &small));
    LOOM_CHECK(measure(tr, big, &large));
    const double alphaUs = small * 1e6;
    const double gbps = big / std::max(1e-9, large - small) / 1e9;
    if (std::string(tr) == "shm")
      out->shmAlphaUs = alphaUs, out->shmGBps = gbps;
    else
      out->tcpAlphaUs = alphaUs, out->tcpGBps = gbps;
  }
  std::vector<float> a(big / 4, 1.0f), b(big / 4, 2.0f);
  auto t0 = Clock::now();
  for (int i = 0; i < 20; ++i)
    loom::kernels::reduce(a.data(), a.data(), b.data(), a.size(), loom::DataType::kFloat32,
                          loom::RedOp::kSum);
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  out->reduceGBps = 20.0 * big / s / 1e9;
  out->hostMemGBps = std::max(out->hostMemGBps, out->shmGBps * 2);
  return loom::Status();
}

}  // namespace loomplan
