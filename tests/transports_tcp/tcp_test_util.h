// Helpers for the tcp transport tests: bring up bootstrap + tcp transport for one rank, and drive
// requests to completion with a deadline the way the Executor does (progress, then wait).
#pragma once

#include <stdlib.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/fork_ranks.h"
#include "core/bootstrap.h"
#include "core/params.h"
#include "transports/transport.h"

namespace loom::testing {

#define RANK_EXPECT(cond, ...)                                                            \
  do {                                                                                    \
    if (!(cond)) return ::loom::strCat("line ", __LINE__, ": ", #cond, " ", __VA_ARGS__); \
  } while (0)
#define RANK_OK(expr)                                                                         \
  do {                                                                                        \
    ::loom::Status s_ = (expr);                                                               \
    if (!s_.ok()) return ::loom::strCat("line ", __LINE__, ": ", #expr, ": ", s_.toString()); \
  } while (0)

struct UniqueId {
  char bytes[bootstrap::kUniqueIdBytes];
};

inline UniqueId newUniqueId() {
  UniqueId id;
  Status s = bootstrap::makeUniqueId(id.bytes);
  if (!s.ok()) abort();
  return id;
}

struct TcpRank {
  std::unique_ptr<bootstrap::Bootstrap> boot;
  std::unique_ptr<transport::Transport> t;
};

inline Status setupTcpRank(const UniqueId& id, int rank, int n, TcpRank* out,
                           int64_t timeoutMs = 30000, std::string commTag = "",
                           const std::atomic<bool>* abort = nullptr) {
  LOOM_CHECK(bootstrap::Bootstrap::create(id.bytes, rank, n, timeoutMs, abort, &out->boot));
  transport::SetupArgs a;
  a.rank = rank;
  a.nranks = n;
  for (int p = 0; p < n; ++p) {
    if (p != rank) a.peers.push_back(p);
  }
  a.ids = out->boot->peers();
  bootstrap::Bootstrap* b = out->boot.get();
  a.allGather = [b](void* d, size_t bytes) { return b->allGather(d, bytes); };
  a.commTag = commTag.empty() ? bootstrap::idTag(id.bytes) : commTag;
  a.timeoutMs = timeoutMs;
  a.abortFlag = abort;
  return transport::createTcpTransport(a, &out->t);
}

// Progress until every request completes; checks FIFO completion order per list when asked.
inline Status drive(transport::Transport* t, const std::vector<transport::Request*>& reqs,
                    int64_t timeoutMs = 60000) {
  auto t0 = std::chrono::steady_clock::now();
  auto lastCheck = t0;
  for (;;) {
    bool all = true;
    for (auto* r : reqs) all = all && r->complete;
    if (all) return Status();
    bool moved = false;
    LOOM_CHECK(t->progress(&moved));
    auto now = std::chrono::steady_clock::now();
    if (now - t0 > std::chrono::milliseconds(timeoutMs)) return timeoutError("drive timed out");
    if (!moved) {
      if (now - lastCheck > std::chrono::milliseconds(200)) {
        LOOM_CHECK(t->checkPeers());
        lastCheck = now;
      }
      LOOM_CHECK(t->wait(50000));
    }
  }
}

inline void setEnvForRank(const char* name, const std::string& value) {
  setenv(name, value.c_str(), 1);
  params::resetCacheForTesting();
}

inline uint8_t patternByte(uint64_t i, int from, int to) {
  return static_cast<uint8_t>((i * 2654435761u >> 7) + from * 17 + to * 5);
}

}  // namespace loom::testing
