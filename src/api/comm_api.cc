// C API: versions, errors, unique ids and communicator lifetime.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <thread>

#include "api/comm.h"
#include "core/log.h"
#include "core/params.h"
#include "transports/policy.h"

using loom::Status;
using loom::api::fail;

namespace loom::api {

namespace {
thread_local std::string tLastError;
}

loomResult_t fail(loomComm* c, const Status& s) {
  if (s.ok()) return loomSuccess;
  LOOM_WARN(COLL, s.toString());
  tLastError = s.message();
  if (c != nullptr && isLiveComm(c)) {
    std::lock_guard<std::mutex> g(c->mu);
    c->lastError = s.message();
    if ((s.code() == Code::kRemoteError || s.code() == Code::kTimeout ||
         s.code() == Code::kRevoked) &&
        c->asyncError == loomSuccess)
      c->asyncError = toResult(s.code());
  }
  return toResult(s.code());
}

const char* threadLastError() { return tLastError.c_str(); }

}  // namespace loom::api

using loom::api::usableComm;

extern "C" {

loomResult_t loomGetVersion(int* version) {
  if (version == nullptr) return fail(nullptr, loom::invalidArgument("version is NULL"));
  *version = LOOM_VERSION_CODE;
  return loomSuccess;
}

const char* loomGetErrorString(loomResult_t r) {
  switch (r) {
    case loomSuccess:
      return "no error";
    case loomSystemError:
      return "unhandled system error (run with LOOM_DEBUG=INFO for details)";
    case loomInternalError:
      return "internal error - please report this issue to the loom developers";
    case loomInvalidArgument:
      return "invalid argument (run with LOOM_DEBUG=WARN for details)";
    case loomInvalidUsage:
      return "invalid usage (run with LOOM_DEBUG=WARN for details)";
    case loomRemoteError:
      return "remote process exited or there was a network error";
    case loomInProgress:
      return "operation in progress";
    case loomTimeout:
      return "operation timed out";
    case loomCommRevoked:
      return "communicator revoked (a peer failed or a rank called loomCommRevoke): shrink or "
             "destroy it";
    default:
      return "unknown result code";
  }
}

const char* loomGetLastError(loomComm_t comm) {
  if (comm != nullptr && loom::api::isLiveComm(comm)) {
    std::lock_guard<std::mutex> g(comm->mu);
    thread_local std::string copy;
    copy = comm->lastError;
    return copy.c_str();
  }
  return loom::api::threadLastError();
}

loomResult_t loomGetUniqueId(loomUniqueId* id) {
  if (id == nullptr) return fail(nullptr, loom::invalidArgument("uniqueId is NULL"));
  std::memset(id->internal, 0, sizeof(id->internal));
  return fail(nullptr, loom::bootstrap::makeUniqueId(id->internal));
}

loomResult_t loomUniqueIdToString(const loomUniqueId* id, char* out, size_t outBytes) {
  if (id == nullptr) return fail(nullptr, loom::invalidArgument("uniqueId is NULL"));
  if (out == nullptr) return fail(nullptr, loom::invalidArgument("out is NULL"));
  std::string s = loom::bootstrap::idToString(id->internal);
  if (outBytes < s.size() + 1)
    return fail(nullptr, loom::invalidArgument("outBytes ", outBytes, " is less than the ",
                                               s.size() + 1, " bytes needed"));
  std::memcpy(out, s.c_str(), s.size() + 1);
  return loomSuccess;
}

loomResult_t loomUniqueIdFromString(const char* text, loomUniqueId* id) {
  if (text == nullptr) return fail(nullptr, loom::invalidArgument("text is NULL"));
  if (id == nullptr) return fail(nullptr, loom::invalidArgument("uniqueId is NULL"));
  return fail(nullptr, loom::bootstrap::idFromString(text, id->internal));
}

loomResult_t loomCommInitRankConfig(loomComm_t* comm, int nranks, loomUniqueId id, int rank,
                                    const loomConfig_t* config) {
  if (comm == nullptr) return fail(nullptr, loom::invalidArgument("comm (output pointer) is NULL"));
  *comm = nullptr;
  if (nranks < 1) return fail(nullptr, loom::invalidArgument("nranks ", nranks, " must be >= 1"));
  if (rank < 0 || rank >= nranks)
    return fail(nullptr, loom::invalidArgument("rank ", rank, " is outside [0, ", nranks, ")"));
  loom::api::CommOptions opt;
  bool blocking = true;
  if (config != nullptr) {
    if (config->size < offsetof(loomConfig_t, commName) + sizeof(config->commName) ||
        config->magic != LOOM_CONFIG_MAGIC)
      return fail(nullptr, loom::invalidArgument(
                               "config was not initialised with LOOM_CONFIG_INITIALIZER (size ",
                               config->size, ", magic ", config->magic, ")"));
    blocking = config->blocking != 0;
    opt.timeoutMs = config->timeoutMs;
    if (config->transport != nullptr) opt.transport = config->transport;
    if (config->commName != nullptr) opt.name = config->commName;
  }
  {
    loom::transport::Forced forced;
    loom::Status s = loom::transport::parseTransport(opt.transport, "config->transport", &forced);
    if (!s.ok()) return fail(nullptr, s);
  }
  auto* c = new (std::nothrow) loomComm();
  if (c == nullptr) return fail(nullptr, loom::systemError("out of memory creating comm"));
  if (!blocking) {
    c->initDone = false;
    c->initThread = std::thread([c, id, nranks, rank, opt] {
      c->initStatus = loom::api::commInit(id.internal, nranks, rank, opt, c);
      if (!c->initStatus.ok()) LOOM_WARN(INIT, c->initStatus.toString());
      c->initDone = true;
    });
    loom::api::registerComm(c);
    *comm = c;
    return loomInProgress;
  }
  Status s = loom::api::commInit(id.internal, nranks, rank, opt, c);
  if (!s.ok()) {
    c->abortFlag = true;
    loom::api::commFree(c);
    delete c;
    return fail(nullptr, s);
  }
  loom::api::registerComm(c);
  *comm = c;
  return loomSuccess;
}

loomResult_t loomCommInitRank(loomComm_t* comm, int nranks, loomUniqueId id, int rank) {
  return loomCommInitRankConfig(comm, nranks, id, rank, nullptr);
}

loomResult_t loomCommInitFromEnv(loomComm_t* comm) {
  std::string idText = loom::params::commId();
  if (idText.empty())
    return fail(nullptr, loom::invalidArgument("LOOM_COMM_ID is not set (id string or @file)"));
  if (idText[0] == '@') {
    FILE* f = std::fopen(idText.c_str() + 1, "r");
    if (f == nullptr)
      return fail(nullptr, loom::errnoStatus("LOOM_COMM_ID file " + idText.substr(1), errno));
    char buf[2 * LOOM_UNIQUE_ID_BYTES + 8] = {0};
    size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
    std::fclose(f);
    idText.assign(buf, n);
    while (!idText.empty() && (idText.back() == '\n' || idText.back() == ' ')) idText.pop_back();
  }
  loomUniqueId id;
  loomResult_t r = loomUniqueIdFromString(idText.c_str(), &id);
  if (r != loomSuccess) return r;
  auto readInt = [](std::initializer_list<const char*> names, int* out) {
    for (const char* n : names) {
      std::string v;
      if (loom::params::rawEnv(n, &v) && !v.empty()) {
        *out = std::atoi(v.c_str());
        return true;
      }
    }
    return false;
  };
  int rank = -1, nranks = -1;
  if (!readInt({"LOOM_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}, &rank))
    return fail(nullptr,
                loom::invalidArgument("rank not found: set LOOM_RANK (or run under mpirun/srun)"));
  if (!readInt({"LOOM_NRANKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}, &nranks))
    return fail(nullptr, loom::invalidArgument("rank count not found: set LOOM_NRANKS"));
  return loomCommInitRank(comm, nranks, id, rank);
}

loomResult_t loomCommCount(const loomComm_t comm, int* count) {
  if (Status s = usableComm(comm); !s.ok()) return fail(comm, s);
  if (count == nullptr) return fail(comm, loom::invalidArgument("count is NULL"));
  *count = comm->nranks;
  return loomSuccess;
}

loomResult_t loomCommUserRank(const loomComm_t comm, int* rank) {
  if (Status s = usableComm(comm); !s.ok()) return fail(comm, s);
  if (rank == nullptr) return fail(comm, loom::invalidArgument("rank is NULL"));
  *rank = comm->rank;
  return loomSuccess;
}

loomResult_t loomCommGetAsyncError(loomComm_t comm, loomResult_t* asyncError) {
  if (Status s = loom::api::checkComm(comm); !s.ok()) return fail(nullptr, s);
  if (asyncError == nullptr) return fail(comm, loom::invalidArgument("asyncError is NULL"));
  if (!comm->initDone.load()) {
    *asyncError = loomInProgress;
    return loomSuccess;
  }
  if (!comm->initStatus.ok()) {
    *asyncError = loom::api::toResult(comm->initStatus.code());
    return loomSuccess;
  }
  Status v = loom::api::revokedStatus(comm);
  std::lock_guard<std::mutex> g(comm->mu);
  if (comm->asyncError == loomSuccess && !v.ok()) {
    comm->asyncError = loom::api::toResult(v.code());
    comm->lastError = v.message();
  }
  *asyncError = comm->asyncError;
  return loomSuccess;
}

// Waits (bounded) until no operation of another thread or stream is inside the communicator.
static void drain(loomComm* c) {
  for (int i = 0; i < 200000 && c->inFlight.load() > 0; ++i) {
    for (auto* t : c->transports) t->wake();
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

loomResult_t loomCommDestroy(loomComm_t comm) {
  if (Status s = loom::api::checkComm(comm); !s.ok()) return fail(nullptr, s);
  drain(comm);
  if (!loom::api::unregisterComm(comm))
    return fail(nullptr, loom::invalidUsage("comm destroyed twice (concurrently)"));
  loom::api::commFree(comm);
  delete comm;
  return loomSuccess;
}

loomResult_t loomCommAbort(loomComm_t comm) {
  if (Status s = loom::api::checkComm(comm); !s.ok()) return fail(nullptr, s);
  comm->abortFlag = true;
  for (auto* t : comm->transports) t->wake();
  drain(comm);
  if (!loom::api::unregisterComm(comm)) return loomSuccess;  // another thread won the race
  loom::api::commFree(comm);
  delete comm;
  return loomSuccess;
}

loomResult_t loomCommSplit(loomComm_t comm, int color, int key, loomComm_t* newcomm,
                           const loomConfig_t* config) {
  if (Status s = usableComm(comm); !s.ok()) return fail(comm, s);
  if (newcomm == nullptr) return fail(comm, loom::invalidArgument("newcomm is NULL"));
  *newcomm = nullptr;
  if (color < 0 && color != LOOM_SPLIT_NOCOLOR)
    return fail(comm,
                loom::invalidArgument("color ", color, " must be >= 0 or LOOM_SPLIT_NOCOLOR"));
  // Everyone learns every (color, key); the first rank of each color (by key, then rank) makes the
  // new id and everyone gathers the ids.
  struct Entry {
    int color, key, rank;
  };
  std::vector<Entry> all(comm->nranks);
  all[comm->rank] = {color, key, comm->rank};
  Status s = comm->bootstrap->allGather(all.data(), sizeof(Entry));
  if (!s.ok()) return fail(comm, s);
  std::vector<Entry> mine;
  for (const Entry& e : all)
    if (e.color == color && color != LOOM_SPLIT_NOCOLOR) mine.push_back(e);
  std::sort(mine.begin(), mine.end(), [](const Entry& a, const Entry& b) {
    return a.key != b.key ? a.key < b.key : a.rank < b.rank;
  });
  std::vector<loomUniqueId> ids(comm->nranks);
  std::memset(ids.data(), 0, ids.size() * sizeof(loomUniqueId));
  if (!mine.empty() && mine.front().rank == comm->rank) {
    s = loom::bootstrap::makeUniqueId(ids[comm->rank].internal);
    if (!s.ok()) return fail(comm, s);
  }
  s = comm->bootstrap->allGather(ids.data(), sizeof(loomUniqueId));
  if (!s.ok()) return fail(comm, s);
  if (color == LOOM_SPLIT_NOCOLOR) return loomSuccess;
  int newRank = 0;
  for (size_t i = 0; i < mine.size(); ++i)
    if (mine[i].rank == comm->rank) newRank = static_cast<int>(i);
  loomConfig_t cfg = LOOM_CONFIG_INITIALIZER;
  if (config == nullptr) {
    cfg.timeoutMs = comm->timeoutMs;
    config = &cfg;
  }
  return loomCommInitRankConfig(newcomm, static_cast<int>(mine.size()), ids[mine.front().rank],
                                newRank, config);
}

}  // extern "C"
