#include "perf_coord.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace loom::perf {

double Coord::sum(double v) {
  std::vector<double> all(size());
  allgather(&v, sizeof(v), all.data());
  double s = 0;
  for (double x : all) s += x;
  return s;
}

double Coord::max(double v) {
  std::vector<double> all(size());
  allgather(&v, sizeof(v), all.data());
  double m = all[0];
  for (double x : all) m = x > m ? x : m;
  return m;
}

namespace {

struct ForkShared {
  pthread_barrier_t barrier;
  char blob[Coord::kMaxBlob];
  char slots[Coord::kMaxRanks][Coord::kMaxSlot];
};

class ForkCoord : public Coord {
 public:
  ForkCoord(ForkShared* shared, int rank, int size) : shared_(shared), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* kind() const override { return "fork"; }
  void barrier() override { pthread_barrier_wait(&shared_->barrier); }
  void bcast(void* data, size_t bytes, int root) override {
    if (rank_ == root) std::memcpy(shared_->blob, data, bytes);
    barrier();
    if (rank_ != root) std::memcpy(data, shared_->blob, bytes);
    barrier();
  }
  void allgather(const void* in, size_t bytes, void* out) override {
    std::memcpy(shared_->slots[rank_], in, bytes);
    barrier();
    for (int r = 0; r < size_; ++r) {
      std::memcpy(static_cast<char*>(out) + r * bytes, shared_->slots[r], bytes);
    }
    barrier();
  }
  [[noreturn]] void abortAll(int rc) override {  // the launcher terminates the other ranks
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(rc);
  }

 private:
  ForkShared* shared_;
  int rank_;
  int size_;
};

void terminateAll(const std::vector<pid_t>& pids, const std::vector<bool>& done) {
  for (size_t r = 0; r < pids.size(); ++r) {
    if (!done[r]) kill(pids[r], SIGTERM);
  }
}

}  // namespace

// The CPU for each rank, or none: see runForked. Two unbound ranks that spin while they wait can
// be kept on one CPU by the scheduler for thousands of calls, taking turns, while the other CPU
// idles (perf/results/2026-12-04-vm-shm-doorbell); mpirun binds 2 ranks to a core each by default.
std::vector<int> rankCpus(int nranks, const std::string& bind) {
  if (bind == "none") return {};
  const std::vector<int> cpus = allowedCpus();
  if (cpus.empty() || (bind == "auto" && nranks > static_cast<int>(cpus.size()))) return {};
  std::vector<int> out(nranks);
  for (int r = 0; r < nranks; ++r) out[r] = cpus[r % cpus.size()];
  return out;
}

std::vector<int> allowedCpus() {
  cpu_set_t set;
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

int runForked(int nranks, int timeoutSec, const std::string& bind,
              const std::function<int(Coord&)>& body) {
  if (nranks < 1 || nranks > Coord::kMaxRanks) {
    std::fprintf(stderr, "--ranks %d: must be 1..%d\n", nranks, Coord::kMaxRanks);
    return 2;
  }
  const std::vector<int> cpus = rankCpus(nranks, bind);
  if (!cpus.empty()) {
    std::printf("# --bind %s: rank r on CPU", bind.c_str());
    for (int r = 0; r < nranks; ++r) std::printf(" %d", cpus[r]);
    std::printf("\n");
  }
  void* mem =
      mmap(nullptr, sizeof(ForkShared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    std::perror("mmap of the launcher's shared block");
    return 2;
  }
  auto* shared = static_cast<ForkShared*>(mem);
  pthread_barrierattr_t attr;
  pthread_barrierattr_init(&attr);
  pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_barrier_init(&shared->barrier, &attr, static_cast<unsigned>(nranks));
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<pid_t> pids(nranks, -1);
  std::vector<bool> done(nranks, false);
  for (int r = 0; r < nranks; ++r) {
    pid_t pid = fork();
    if (pid < 0) {
      std::perror("fork");
      terminateAll(pids, done);
      return 2;
    }
    if (pid == 0) {
      if (!cpus.empty()) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus[r], &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0)
          std::fprintf(stderr, "rank %d: cannot bind to CPU %d: %s\n", r, cpus[r],
                       std::strerror(errno));
      }
      ForkCoord coord(shared, r, nranks);
      int rc = body(coord);
      std::fflush(stdout);
      std::fflush(stderr);
      _exit(rc);
    }
    pids[r] = pid;
  }
  auto start = std::chrono::steady_clock::now();
  int result = 0;
  int left = nranks;
  bool killing = false;
  auto killTime = start;
  while (left > 0) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      for (int r = 0; r < nranks; ++r) {
        if (pids[r] != pid) continue;
        done[r] = true;
        --left;
        int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (rc != 0 && !killing) {
          std::fprintf(stderr, "rank %d (pid %d) failed with status %d; stopping the others\n", r,
                       static_cast<int>(pid), rc);
          killing = true;
          killTime = std::chrono::steady_clock::now();
          terminateAll(pids, done);
        }
        if (rc != 0 && result == 0) result = rc;  // the first failure, not the ones we stopped
      }
      continue;
    }
    auto now = std::chrono::steady_clock::now();
    if (!killing && timeoutSec > 0 && now - start > std::chrono::seconds(timeoutSec)) {
      std::fprintf(stderr, "--timeout %d s passed; stopping all ranks\n", timeoutSec);
      killing = true;
      killTime = now;
      result = 124;
      terminateAll(pids, done);
    }
    if (killing && now - killTime > std::chrono::seconds(3)) {
      for (int r = 0; r < nranks; ++r) {
        if (!done[r]) kill(pids[r], SIGKILL);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // A rank stopped inside pthread_barrier_wait leaves the barrier busy, and destroying it would
  // wait for that rank forever: after a stop the mapping simply goes.
  if (!killing) pthread_barrier_destroy(&shared->barrier);
  munmap(mem, sizeof(ForkShared));
  return result;
}

bool launchedByMpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}

}  // namespace loom::perf
