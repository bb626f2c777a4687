// Baseline: Gloo's ring and halving-doubling all-reduce over its TCP transport, rendezvous through
// a FileStore directory that rank 0 makes and the coordinator hands out. Gloo all-reduces in
// place; out-of-place rows copy the input into the output first, as a Gloo user would.
#include <string>

#include "perf_backend.h"

#ifdef LOOM_PERF_WITH_GLOO
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <exception>
#include <filesystem>
#include <vector>

#include "perf_data.h"

namespace loom::perf {
namespace {

class GlooBackend : public Backend {
 public:
  bool init(const Options& opts, Coord& coord, std::string* error) {
    halvingDoubling_ = opts.backend == "gloo_hd";
    name_ = opts.backend;
    char dir[Coord::kMaxBlob] = {};
    if (coord.rank() == 0) {
      std::snprintf(dir, sizeof(dir), "/tmp/loom-perf-gloo-XXXXXX");
      if (mkdtemp(dir) == nullptr) dir[0] = '\0';
    }
    coord.bcast(dir, sizeof(dir), 0);
    if (dir[0] == '\0') {
      *error = "gloo: rank 0 could not make a rendezvous directory under /tmp";
      return false;
    }
    char host[Coord::kMaxSlot] = {};
    gethostname(host, sizeof(host) - 1);
    std::vector<char> hosts(Coord::kMaxSlot * coord.size());
    coord.allgather(host, sizeof(host), hosts.data());
    bool oneHost = true;
    for (int r = 0; r < coord.size(); ++r) {
      oneHost = oneHost && std::strcmp(&hosts[r * Coord::kMaxSlot], host) == 0;
    }
    std::string failure;
    try {
      gloo::transport::tcp::attr attr(oneHost ? "127.0.0.1" : host);
      auto device = gloo::transport::tcp::CreateDevice(attr);
      gloo::rendezvous::FileStore store(dir);
      context_ = std::make_shared<gloo::rendezvous::Context>(coord.rank(), coord.size());
      context_->connectFullMesh(store, device);
    } catch (const std::exception& e) {
      failure = std::string("gloo rendezvous in ") + dir + ": " + e.what();
    }
    coord.barrier();
    if (coord.rank() == 0) {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
    *error = failure;
    return failure.empty();
  }

  const char* name() const override { return name_.c_str(); }

  std::string unsupported(const CollCall& c) const override {
    if (c.coll->kind != CollKind::kAllReduce) return "gloo backend runs all_reduce only";
    if (c.dt != loomFloat32 && c.dt != loomFloat64) return "gloo backend runs float and double";
    if (c.op == loomAvg) return "gloo has no avg";
    return "";
  }

  int run(const CollCall& c) override {
    try {
      if (!c.inPlace) std::memcpy(c.recv, c.send, c.count * typeSize(c.dt));
      if (c.dt == loomFloat64) return runTyped<double>(c);
      return runTyped<float>(c);
    } catch (const std::exception& e) {
      error_ = e.what();
      return 1;
    }
  }

  int sync() override { return 0; }
  std::string lastError() const override { return error_; }

 private:
  template <typename T>
  static const gloo::ReductionFunction<T>* function(loomRedOp_t op) {
    switch (op) {
      case loomProd:
        return gloo::ReductionFunction<T>::product;
      case loomMax:
        return gloo::ReductionFunction<T>::max;
      case loomMin:
        return gloo::ReductionFunction<T>::min;
      default:
        return gloo::ReductionFunction<T>::sum;
    }
  }

  // Gloo algorithms are set up once per buffer and run many times; keep the last one.
  template <typename T>
  int runTyped(const CollCall& c) {
    if (c.recv != cachedPtr_ || c.count != cachedCount_ || c.op != cachedOp_ ||
        c.dt != cachedType_) {
      algorithm_.reset();
      std::vector<T*> ptrs{static_cast<T*>(c.recv)};
      int count = static_cast<int>(c.count);
      if (halvingDoubling_) {
        algorithm_ = std::make_unique<gloo::AllreduceHalvingDoubling<T>>(context_, ptrs, count,
                                                                         function<T>(c.op));
      } else {
        algorithm_ =
            std::make_unique<gloo::AllreduceRing<T>>(context_, ptrs, count, function<T>(c.op));
      }
      cachedPtr_ = c.recv;
      cachedCount_ = c.count;
      cachedOp_ = c.op;
      cachedType_ = c.dt;
    }
    algorithm_->run();
    return 0;
  }

  bool halvingDoubling_ = false;
  std::string name_;
  std::shared_ptr<gloo::rendezvous::Context> context_;
  std::unique_ptr<gloo::Algorithm> algorithm_;
  void* cachedPtr_ = nullptr;
  size_t cachedCount_ = 0;
  loomRedOp_t cachedOp_ = loomSum;
  loomDataType_t cachedType_ = loomFloat32;
  std::string error_;
};

}  // namespace

std::unique_ptr<Backend> makeGlooBackend(const Options& opts, Coord& coord, std::string* error) {
  auto b = std::make_unique<GlooBackend>();
  if (!b->init(opts, coord, error)) return nullptr;
  return b;
}

}  // namespace loom::perf

#else

namespace loom::perf {

std::unique_ptr<Backend> makeGlooBackend(const Options&, Coord&, std::string* error) {
  *error = "--backend gloo_*: Gloo (libgloo-dev) was not found when this driver was built";
  return nullptr;
}

}  // namespace loom::perf

#endif
