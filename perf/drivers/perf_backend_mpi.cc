// Baseline: the MPI library's own collectives (Open MPI here), same buffers and sizes as loom.
// Out-of-place broadcast is a local copy on the root plus MPI_Bcast (MPI has no such form).
#include <cstring>
#include <string>

#include "perf_backend.h"
#include "perf_data.h"

#ifdef LOOM_PERF_WITH_MPI
#include <mpi.h>

namespace loom::perf {
namespace {

MPI_Datatype mpiType(loomDataType_t dt) {
  switch (dt) {
    case loomInt8:
      return MPI_INT8_T;
    case loomUint8:
      return MPI_UINT8_T;
    case loomInt32:
      return MPI_INT32_T;
    case loomUint32:
      return MPI_UINT32_T;
    case loomInt64:
      return MPI_INT64_T;
    case loomUint64:
      return MPI_UINT64_T;
    case loomFloat32:
      return MPI_FLOAT;
    case loomFloat64:
      return MPI_DOUBLE;
    default:
      return MPI_DATATYPE_NULL;
  }
}

MPI_Op mpiOp(loomRedOp_t op) {
  switch (op) {
    case loomSum:
      return MPI_SUM;
    case loomProd:
      return MPI_PROD;
    case loomMax:
      return MPI_MAX;
    case loomMin:
      return MPI_MIN;
    default:
      return MPI_OP_NULL;
  }
}

class MpiBackend : public Backend {
 public:
  MpiBackend() { MPI_Comm_dup(MPI_COMM_WORLD, &comm_); }
  ~MpiBackend() override { MPI_Comm_free(&comm_); }
  const char* name() const override { return "mpi"; }

  std::string unsupported(const CollCall& c) const override {
    if (mpiType(c.dt) == MPI_DATATYPE_NULL) return std::string("MPI has no ") + typeName(c.dt);
    if (c.coll->reduces && mpiOp(c.op) == MPI_OP_NULL) return "MPI has no avg";
    if (c.inPlace && (!c.coll->inPlace || c.coll->kind == CollKind::kReduceScatter)) {
      return "no in-place form with NCCL's layout";
    }
    return "";
  }

  int run(const CollCall& c) override {
    MPI_Datatype t = mpiType(c.dt);
    int n = static_cast<int>(c.count);
    const void* in = c.inPlace ? MPI_IN_PLACE : c.send;
    switch (c.coll->kind) {
      case CollKind::kAllReduce:
        return check(MPI_Allreduce(in, c.recv, n, t, mpiOp(c.op), comm_));
      case CollKind::kAllGather:
        return check(MPI_Allgather(in, n, t, c.recv, n, t, comm_));
      case CollKind::kReduceScatter:
        return check(MPI_Reduce_scatter_block(c.send, c.recv, n, t, mpiOp(c.op), comm_));
      case CollKind::kBroadcast:
        if (!c.inPlace && c.rank == c.root) {
          std::memcpy(c.recv, c.send, c.count * typeSize(c.dt));
        }
        return check(MPI_Bcast(c.recv, n, t, c.root, comm_));
      case CollKind::kReduce:
        if (c.inPlace && c.rank != c.root) in = c.send;  // MPI_IN_PLACE is for the root only
        return check(MPI_Reduce(in, c.recv, n, t, mpiOp(c.op), c.root, comm_));
      case CollKind::kAllToAll:
        return check(MPI_Alltoall(c.send, n, t, c.recv, n, t, comm_));
      case CollKind::kSendRecv: {
        const int next = sendrecvTo(c), prev = sendrecvFrom(c);
        return check(
            MPI_Sendrecv(c.send, n, t, next, 7, c.recv, n, t, prev, 7, comm_, MPI_STATUS_IGNORE));
      }
    }
    return 1;
  }

  int sync() override { return 0; }  // MPI's blocking collectives are done on return
  std::string lastError() const override { return error_; }

 private:
  int check(int rc) {
    if (rc == MPI_SUCCESS) return 0;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    error_.assign(text, len);
    return 1;
  }

  MPI_Comm comm_;
  std::string error_;
};

}  // namespace

std::unique_ptr<Backend> makeMpiBackend(const Options&, Coord& coord, std::string* error) {
  if (std::string(coord.kind()) != "mpi") {
    *error = "--backend mpi needs the ranks to be started by mpirun";
    return nullptr;
  }
  return std::make_unique<MpiBackend>();
}

}  // namespace loom::perf

#else

namespace loom::perf {

std::unique_ptr<Backend> makeMpiBackend(const Options&, Coord&, std::string* error) {
  *error = "--backend mpi: this driver was built without MPI (LOOM_WITH_MPI=OFF)";
  return nullptr;
}

}  // namespace loom::perf

#endif
