// The loom backend: the library under test, through its public C API only.
#include <algorithm>
#include <string>

#include "perf_backend.h"
#include "perf_data.h"

namespace loom::perf {
namespace {

class LoomBackend : public Backend {
 public:
  ~LoomBackend() override {
    if (stream_ != nullptr) loomStreamDestroy(stream_);
    if (comm_ != nullptr) loomCommDestroy(comm_);
  }

  // Rank 0 makes the unique id; the coordinator (MPI_Bcast or shared memory) hands it out.
  bool init(const Options& opts, Coord& coord, std::string* error) {
    loomUniqueId id{};
    loomResult_t idResult = loomSuccess;
    if (coord.rank() == 0) idResult = loomGetUniqueId(&id);
    coord.bcast(&idResult, sizeof(idResult), 0);
    if (idResult != loomSuccess) {
      *error = std::string("loomGetUniqueId on rank 0: ") + loomGetErrorString(idResult) + ": " +
               loomGetLastError(nullptr);
      return false;
    }
    coord.bcast(&id, sizeof(id), 0);
    loomResult_t r = loomCommInitRank(&comm_, coord.size(), id, coord.rank());
    if (r != loomSuccess) {
      *error = std::string("loomCommInitRank: ") + loomGetErrorString(r) + ": " +
               loomGetLastError(nullptr);
      comm_ = nullptr;
      return false;
    }
    if (!opts.blocking) {
      r = loomStreamCreate(&stream_);
      if (r != loomSuccess) {
        *error = std::string("loomStreamCreate: ") + loomGetErrorString(r);
        return false;
      }
    }
    return true;
  }

  const char* name() const override { return "loom"; }
  std::string unsupported(const CollCall& call) const override {
    if (call.inPlace && !call.coll->inPlace) return "no in-place form";
    return "";
  }

  int run(const CollCall& c) override { return record(issue(c)); }

  int sync() override {
    if (stream_ == nullptr) return 0;
    return record(loomStreamSynchronize(stream_, -1));
  }

  std::string lastError() const override {
    return std::string(loomGetErrorString(last_)) + ": " + loomGetLastError(comm_);
  }

 private:
  loomResult_t issue(const CollCall& c) {
    switch (c.coll->kind) {
      case CollKind::kAllReduce:
        return loomAllReduce(c.send, c.recv, c.count, c.dt, c.op, comm_, stream_);
      case CollKind::kAllGather:
        return loomAllGather(c.send, c.recv, c.count, c.dt, comm_, stream_);
      case CollKind::kReduceScatter:
        return loomReduceScatter(c.send, c.recv, c.count, c.dt, c.op, comm_, stream_);
      case CollKind::kBroadcast:
        return loomBroadcast(c.send, c.recv, c.count, c.dt, c.root, comm_, stream_);
      case CollKind::kReduce:
        return loomReduce(c.send, c.recv, c.count, c.dt, c.op, c.root, comm_, stream_);
      case CollKind::kAllToAll:
        return loomAllToAll(c.send, c.recv, c.count, c.dt, comm_, stream_);
      case CollKind::kSendRecv: {
        const int next = sendrecvTo(c), prev = sendrecvFrom(c);
        // One message, or (--msg-bytes) messages of at most msgCount elements back to back: all
        // in one group, or (--lockstep 1) each in its own, done before the next is posted.
        const size_t step = c.msgCount > 0 ? c.msgCount : std::max<size_t>(c.count, 1);
        const size_t es = typeSize(c.dt);
        const size_t msgs = std::max<size_t>(1, (c.count + step - 1) / step);  // 0: one empty
        auto group = [&](size_t first, size_t last) {  // messages [first, last) in one group
          loomResult_t r = loomGroupStart();
          if (r != loomSuccess) return r;
          loomResult_t s = loomSuccess, v = loomSuccess;
          for (size_t k = first; k < last; ++k) {
            const size_t off = k * step, n = std::min(step, c.count - off);
            const char* in = static_cast<const char*>(c.send) + off * es;
            char* out = static_cast<char*>(c.recv) + off * es;
            if (s == loomSuccess) s = loomSend(in, n, c.dt, next, comm_, stream_);
            if (v == loomSuccess) v = loomRecv(out, n, c.dt, prev, comm_, stream_);
          }
          r = loomGroupEnd();
          return s != loomSuccess ? s : (v != loomSuccess ? v : r);
        };
        if (!c.lockstep) return group(0, msgs);
        for (size_t k = 0; k < msgs; ++k) {
          loomResult_t r = group(k, k + 1);
          if (r == loomSuccess) r = loomStreamSynchronize(stream_, -1);
          if (r != loomSuccess) return r;
        }
        return loomSuccess;
      }
    }
    return loomInvalidArgument;
  }

  int record(loomResult_t r) {
    if (r != loomSuccess) last_ = r;
    return r == loomSuccess ? 0 : 1;
  }

  loomComm_t comm_ = nullptr;
  loomStream_t stream_ = nullptr;
  loomResult_t last_ = loomSuccess;
};

}  // namespace

std::unique_ptr<Backend> makeLoomBackend(const Options& opts, Coord& coord, std::string* error) {
  auto b = std::make_unique<LoomBackend>();
  if (!b->init(opts, coord, error)) return nullptr;
  return b;
}

std::unique_ptr<Backend> makeBackend(const Options& opts, Coord& coord, std::string* error) {
  if (opts.backend == "loom") return makeLoomBackend(opts, coord, error);
  if (opts.backend == "mpi") return makeMpiBackend(opts, coord, error);
  if (opts.backend == "gloo_ring" || opts.backend == "gloo_hd") {
    return makeGlooBackend(opts, coord, error);
  }
  *error = "unknown --backend '" + opts.backend + "' (loom, mpi, gloo_ring, gloo_hd)";
  return nullptr;
}

}  // namespace loom::perf
