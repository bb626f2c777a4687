// Side channel between the ranks of a perf run: barriers around timed loops, the bootstrap id,
// and gathering results. It never carries the data being measured. Two kinds: forked local ranks
// (shared memory + a process-shared barrier that sleeps, so 8 ranks run on 2 cores) and MPI.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace loom::perf {

class Coord {
 public:
  static constexpr size_t kMaxBlob = 4096;  // bcast limit
  static constexpr size_t kMaxSlot = 256;   // allgather limit per rank
  static constexpr int kMaxRanks = 512;

  virtual ~Coord() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual const char* kind() const = 0;  // "fork" or "mpi"
  virtual void barrier() = 0;
  virtual void bcast(void* data, size_t bytes, int root) = 0;
  virtual void allgather(const void* in, size_t bytes, void* out) = 0;
  // Ends the whole run after a fatal error on this rank (the others may be blocked in a call).
  [[noreturn]] virtual void abortAll(int rc) = 0;

  double sum(double v);
  double max(double v);
};

// Forks nranks processes that each call body(coord) and exit with its return value. The parent
// waits; when a rank fails (non-zero exit or signal) or timeoutSec (> 0) passes, it terminates
// the others. Returns 0 when every rank returned 0.
// bind: "core" pins rank r to the r-th CPU of the launcher's affinity mask (round robin), "auto"
// does so when nranks fits the mask, "none" leaves placement to the scheduler.
int runForked(int nranks, int timeoutSec, const std::string& bind,
              const std::function<int(Coord&)>& body);

// The CPUs this process may run on (its affinity mask), ascending; empty if it cannot be read.
std::vector<int> allowedCpus();

// True when this process was started by an MPI launcher (OMPI_/PMI_/PMIX_ environment).
bool launchedByMpi();

// Initialises MPI, runs body on an MPI coordinator over a duplicate of MPI_COMM_WORLD, finalises.
// Returns the exit status every rank should use (non-zero if any rank's body failed).
// Without MPI support compiled in, prints why and returns 2.
int runMpi(int* argc, char*** argv, const std::function<int(Coord&)>& body);

}  // namespace loom::perf
