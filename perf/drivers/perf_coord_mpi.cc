// The MPI coordinator: MPI only bootstraps and synchronises the perf run (and, for the mpi
// backend, is the baseline being measured on its own duplicate communicator).
#include <cstdio>
#include <cstdlib>

#include "perf_coord.h"

#ifdef LOOM_PERF_WITH_MPI
#include <mpi.h>

namespace loom::perf {
namespace {

class MpiCoord : public Coord {
 public:
  MpiCoord() {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiCoord() override { MPI_Comm_free(&comm_); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* kind() const override { return "mpi"; }
  void barrier() override { MPI_Barrier(comm_); }
  void bcast(void* data, size_t bytes, int root) override {
    MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, comm_);
  }
  void allgather(const void* in, size_t bytes, void* out) override {
    MPI_Allgather(in, static_cast<int>(bytes), MPI_BYTE, out, static_cast<int>(bytes), MPI_BYTE,
                  comm_);
  }
  [[noreturn]] void abortAll(int rc) override {
    std::fflush(stdout);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, rc);
    std::abort();
  }

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

int runMpi(int* argc, char*** argv, const std::function<int(Coord&)>& body) {
  MPI_Init(argc, argv);
  int rc = 0;
  {
    MpiCoord coord;
    rc = body(coord);
    int worst = 0;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    rc = worst;
  }
  MPI_Finalize();
  return rc;
}

}  // namespace loom::perf

#else

namespace loom::perf {

int runMpi(int*, char***, const std::function<int(Coord&)>&) {
  std::fprintf(stderr,
               "started by an MPI launcher, but this driver was built without MPI "
               "(LOOM_WITH_MPI=OFF); use --ranks N instead\n");
  return 2;
}

}  // namespace loom::perf

#endif
