#include "process_group.h"

#include <c10/util/Exception.h>
#include <pybind11/pybind11.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "tensors.h"

namespace loom::torch_backend {

namespace {

constexpr const char* kIdKey = "loom_unique_id";

// How long shutdown waits for queued work before aborting (LOOM_TORCH_SHUTDOWN_MS, default 10 s).
int64_t shutdownGraceMs() {
  const char* v = std::getenv("LOOM_TORCH_SHUTDOWN_MS");
  return v && *v ? std::atoll(v) : 10000;
}

// Collectives up to this many bytes run inline when the stream is idle (default 64 KiB; 0: never).
size_t inlineLimitBytes() {
  const char* v = std::getenv("LOOM_TORCH_INLINE_BYTES");
  return v && *v ? static_cast<size_t>(std::atoll(v)) : 65536;
}

}  // namespace

ProcessGroupLoom::ProcessGroupLoom(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                   std::chrono::milliseconds timeout)
    : TorchBase(rank, size), timeout_(timeout), inlineLimit_(inlineLimitBytes()) {
  TORCH_CHECK(store, "loom: the store is None");
  TORCH_CHECK(size >= 1 && rank >= 0 && rank < size, "loom: rank ", rank,
              " is outside the group size ", size);
  loomUniqueId id;
  char text[2 * LOOM_UNIQUE_ID_BYTES + 1];
  if (rank == 0) {
    checkLoom(loomGetUniqueId(&id), nullptr, "loomGetUniqueId");
    checkLoom(loomUniqueIdToString(&id, text, sizeof(text)), nullptr, "loomUniqueIdToString");
    store->set(kIdKey, std::vector<uint8_t>(text, text + std::strlen(text)));
  } else {
    std::vector<uint8_t> v = store->get(kIdKey);
    TORCH_CHECK(v.size() < sizeof(text), "loom: the store's ", kIdKey, " has ", v.size(),
                " bytes, not a loom unique id");
    std::memcpy(text, v.data(), v.size());
    text[v.size()] = '\0';
    checkLoom(loomUniqueIdFromString(text, &id), nullptr, "loomUniqueIdFromString");
  }
  loomConfig_t cfg = LOOM_CONFIG_INITIALIZER;
  cfg.timeoutMs = timeout.count() > 0 ? timeout.count() : 0;
  cfg.commName = "torch";
  checkLoom(loomCommInitRankConfig(&comm_, size, id, rank, &cfg), nullptr,
            "loomCommInitRankConfig");
  loomResult_t r = loomStreamCreate(&stream_);
  if (r != loomSuccess) {
    loomCommDestroy(comm_);
    comm_ = nullptr;
    checkLoom(r, nullptr, "loomStreamCreate");
  }
}

ProcessGroupLoom::~ProcessGroupLoom() { shutdown(); }

void ProcessGroupLoom::shutdown() {
  // Dropping the last Python reference runs this with the GIL held; completions of queued work may
  // run Python future callbacks, which need it.
  std::optional<pybind11::gil_scoped_release> noGil;
  if (Py_IsInitialized() && PyGILState_Check()) noGil.emplace();
  std::lock_guard<std::mutex> g(mu_);
  if (stream_ == nullptr) return;
  // Work still queued after the grace (a peer is gone, or the group was dropped with work in
  // flight) is aborted, so the stream drains at once instead of waiting for the comm timeout.
  const bool clean = loomStreamSynchronize(stream_, shutdownGraceMs()) == loomSuccess;
  if (clean)
    loomCommDestroy(comm_);
  else
    loomCommAbort(comm_);
  loomStreamDestroy(stream_);  // runs the remaining completions (they report the abort)
  stream_ = nullptr;
  comm_ = nullptr;
}

ProcessGroupLoom::WorkPtr ProcessGroupLoom::enqueue(Op op) {
  auto work = c10::make_intrusive<LoomWork>(rank_, op.type, op.name, std::move(op.outputs),
                                            std::move(op.post), std::move(op.keep));
  loomResult_t inlineResult;
  std::string inlineError;
  {
    std::lock_guard<std::mutex> g(mu_);
    TORCH_CHECK(stream_ != nullptr, "loom ", op.name, ": the process group was shut down");
    ++seq_;
    if (op.inlineBytes > inlineLimit_ || loomStreamQuery(stream_) != loomSuccess) {
      checkLoom(op.issue(comm_, stream_), comm_, op.name);
      LoomWork::launchCompletion(work, stream_, comm_);
      return work;
    }
    // A small collective with nothing queued before it runs here: a blocking loom call costs
    // less than waking the stream thread and being woken by it.
    inlineResult = op.issue(comm_, nullptr);
    if (inlineResult == loomInvalidArgument || inlineResult == loomInvalidUsage)
      checkLoom(inlineResult, comm_, op.name);
    if (inlineResult != loomSuccess) inlineError = loomGetLastError(comm_);
  }
  // Outside the lock: future callbacks (comm hooks) may issue more operations on this group.
  work->complete(inlineResult, inlineError);
  return work;
}

void ProcessGroupLoom::checkRoot(int root, const char* op) const {
  TORCH_CHECK(root >= 0 && root < size_, "loom ", op, ": root ", root, " is outside the group [0, ",
              size_, ")");
}

void ProcessGroupLoom::checkPeer(int peer, const char* op) const {
  TORCH_CHECK(peer >= 0 && peer < size_, "loom ", op, ": peer rank ", peer,
              " is outside the group [0, ", size_, ")");
  TORCH_CHECK(peer != rank_, "loom ", op, ": peer rank ", peer,
              " is this rank (send/recv to self is not supported)");
}

}  // namespace loom::torch_backend
