// C API: surviving failures. Revoke, the failed ranks (local view and agreement), shrink and grow
// (docs/failures.md).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>

#include "api/comm.h"
#include "core/log.h"
#include "core/socket.h"

using loom::Status;
using loom::api::fail;

namespace loom::api {
namespace {

Status writeRanks(const std::vector<int>& failed, int* ranks, int capacity, int* n) {
  if (n == nullptr) return invalidArgument("nfailed is NULL");
  if (capacity < 0) return invalidArgument("capacity ", capacity, " must be >= 0");
  if (capacity > 0 && ranks == nullptr)
    return invalidArgument("ranks is NULL (capacity ", capacity, ")");
  *n = static_cast<int>(failed.size());
  for (int i = 0; i < capacity && i < *n; ++i) ranks[i] = failed[i];
  return Status();
}

// The ranks to leave out: checked (range, duplicates, not this rank), or the agreed failed set.
Status excludedRanks(loomComm* c, const int* exclude, int n, std::vector<int>* out) {
  out->clear();
  if (n < 0) return invalidArgument("nexclude ", n, " must be >= 0");
  if (n > 0 && exclude == nullptr)
    return invalidArgument("excludeRanks is NULL (nexclude ", n, ")");
  if (n == 0) {
    if (c->monitor) LOOM_CHECK(c->monitor->agree(c->timeoutMs, out));
    return Status();
  }
  std::vector<bool> seen(c->nranks, false);
  for (int i = 0; i < n; ++i) {
    const int r = exclude[i];
    if (r < 0 || r >= c->nranks)
      return invalidArgument("excludeRanks[", i, "] = ", r, " is outside [0, ", c->nranks, ")");
    if (r == c->rank)
      return invalidArgument("excludeRanks[", i, "] = ", r,
                             " is this rank: an excluded rank does not call loomCommShrink");
    if (seen[r]) return invalidArgument("excludeRanks[", i, "] = ", r, " is listed twice");
    seen[r] = true;
    out->push_back(r);
  }
  std::sort(out->begin(), out->end());
  return Status();
}

// Every member must have computed the same membership; member 0's random tag names the new
// communicator (shm segments, tcp handshakes).
Status agreeOnMembership(loomComm* parent, loomComm* c, const std::vector<int>& members) {
  struct Record {
    uint64_t hash;
    uint8_t tag[16];
  };
  uint64_t h = 0xcbf29ce484222325ull;
  for (int m : members) h = (h ^ static_cast<uint64_t>(m)) * 0x100000001b3ull;
  std::vector<Record> all(members.size());
  Record& mine = all[c->rank];
  mine.hash = h;
  LOOM_CHECK(net::randomBytes(mine.tag, sizeof(mine.tag)));
  LOOM_CHECK(c->bootstrap->allGather(all.data(), sizeof(Record)));
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].hash != h)
      return invalidUsage("loomCommShrink: ", parent->ids[members[i]].describe(),
                          " keeps a different set of ranks than this rank (every remaining rank "
                          "must pass the same excludeRanks)");
  static const char* kHex = "0123456789abcdef";
  c->commTag.clear();
  for (uint8_t b : all[0].tag) {
    c->commTag += kHex[b >> 4];
    c->commTag += kHex[b & 15];
  }
  return Status();
}

Status shrink(loomComm* parent, const int* exclude, int n, loomComm* c) {
  std::vector<int> out;
  LOOM_CHECK(excludedRanks(parent, exclude, n, &out));
  if (std::find(out.begin(), out.end(), parent->rank) != out.end())
    return revokedError(parent->ids[parent->rank].describe(),
                        " is among the failed ranks the survivors agreed on; it cannot shrink");
  std::vector<int> members;
  for (int r = 0; r < parent->nranks; ++r)
    if (!std::binary_search(out.begin(), out.end(), r)) members.push_back(r);
  const uint64_t salt = ++parent->shrinks;
  LOOM_CHECK(
      bootstrap::deriveBootstrap(parent->bootstrap, members, salt, &c->abortFlag, &c->bootstrap));
  c->rank = c->bootstrap->rank();
  c->nranks = c->bootstrap->nranks();
  c->options = parent->options;
  c->timeoutMs = parent->timeoutMs;
  log::setThreadRank(c->rank);
  LOOM_CHECK(agreeOnMembership(parent, c, members));
  LOOM_INFO(INIT, "shrink: rank ", parent->rank, " of ", parent->nranks, " is rank ", c->rank,
            " of ", c->nranks, " (", out.size(), " excluded)");
  return commSetup(c);
}

}  // namespace
}  // namespace loom::api

using loom::api::usableComm;

extern "C" {

loomResult_t loomCommRevoke(loomComm_t comm) {
  if (Status s = usableComm(comm); !s.ok()) return fail(comm, s);
  if (comm->monitor) {
    comm->monitor->revoke(loom::strCat("loomCommRevoke on ", comm->ids[comm->rank].describe()));
  } else {
    comm->revoked = true;
    for (auto* t : comm->transports) t->wake();
  }
  return loomSuccess;
}

loomResult_t loomCommGetFailedRanks(loomComm_t comm, int* ranks, int capacity, int* nfailed) {
  if (Status s = usableComm(comm); !s.ok()) return fail(comm, s);
  std::vector<int> failed;
  if (comm->monitor) failed = comm->monitor->failed();
  return fail(comm, loom::api::writeRanks(failed, ranks, capacity, nfailed));
}

loomResult_t loomCommAgreeFailedRanks(loomComm_t comm, int* ranks, int capacity, int* nfailed) {
  if (Status s = usableComm(comm); !s.ok()) return fail(comm, s);
  std::vector<int> failed;
  if (Status s = loom::api::writeRanks(failed, ranks, 0, nfailed); !s.ok()) return fail(comm, s);
  if (capacity < 0 || (capacity > 0 && ranks == nullptr))
    return fail(comm, loom::api::writeRanks(failed, ranks, capacity, nfailed));
  if (comm->monitor) {
    Status s = comm->monitor->agree(comm->timeoutMs, &failed);
    if (!s.ok()) return fail(comm, s);
  }
  return fail(comm, loom::api::writeRanks(failed, ranks, capacity, nfailed));
}

loomResult_t loomCommShrink(loomComm_t comm, const int* excludeRanks, int nexclude,
                            loomComm_t* newcomm) {
  if (Status s = usableComm(comm); !s.ok()) return fail(comm, s);
  if (newcomm == nullptr) return fail(comm, loom::invalidArgument("newcomm is NULL"));
  *newcomm = nullptr;
  auto* c = new (std::nothrow) loomComm();
  if (c == nullptr) return fail(comm, loom::systemError("out of memory creating comm"));
  Status s = loom::api::shrink(comm, excludeRanks, nexclude, c);
  if (!s.ok()) {
    c->abortFlag = true;
    loom::api::commFree(c);
    delete c;
    return fail(comm, s);
  }
  loom::api::registerComm(c);
  *newcomm = c;
  return loomSuccess;
}

loomResult_t loomCommGrow(loomComm_t comm, int newSize, const loomUniqueId* growId,
                          loomComm_t* newcomm) {
  if (Status s = usableComm(comm); !s.ok()) return fail(comm, s);
  if (newcomm == nullptr) return fail(comm, loom::invalidArgument("newcomm is NULL"));
  *newcomm = nullptr;
  if (newSize < comm->nranks)
    return fail(comm, loom::invalidArgument("newSize ", newSize, " is less than the ", comm->nranks,
                                            " ranks comm already has"));
  if (comm->rank == 0 && growId == nullptr)
    return fail(comm, loom::invalidArgument("growId is NULL on rank 0 (it publishes the id)"));
  // Rank 0's id reaches every member over comm's own bootstrap.
  std::vector<loomUniqueId> ids(comm->nranks);
  std::memset(ids.data(), 0, ids.size() * sizeof(loomUniqueId));
  if (comm->rank == 0) ids[0] = *growId;
  if (Status s = comm->bootstrap->allGather(ids.data(), sizeof(loomUniqueId)); !s.ok())
    return fail(comm, s);
  loomConfig_t cfg = LOOM_CONFIG_INITIALIZER;
  cfg.timeoutMs = comm->timeoutMs;
  if (!comm->options.transport.empty()) cfg.transport = comm->options.transport.c_str();
  if (!comm->options.name.empty()) cfg.commName = comm->options.name.c_str();
  return loomCommInitRankConfig(newcomm, newSize, ids[0], comm->rank, &cfg);
}

}  // extern "C"
