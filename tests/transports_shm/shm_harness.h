// Fork-based rank harness for the shm transport tests: N child processes share an anonymous
// MAP_SHARED arena (made before fork) that provides the allGather a SetupArgs needs, a barrier,
// and a slot for each rank's error message. Children never use gtest macros: a rank body returns ""
// on success or a message, and the parent turns that into test failures.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "transports/transport.h"

namespace loom::test {

constexpr int kMaxRanks = 16;
constexpr size_t kMaxGatherBytes = 256;

struct Arena {
  std::atomic<uint32_t> barrierCount;
  std::atomic<uint32_t> barrierGen;
  std::atomic<uint32_t> shared[16];  // free for test bodies (process-shared flags)
  char gather[2][kMaxRanks][kMaxGatherBytes];
  char result[kMaxRanks][2048];
};

struct RankCtx {
  int rank = 0;
  int nranks = 1;
  Arena* arena = nullptr;
  std::string tag;  // commTag for this run (hex)
  int gatherRound = 0;
  int64_t barrierTimeoutMs = 20000;
  // Collective over all ranks of the run; fails with Timeout after barrierTimeoutMs (a dead rank).
  Status allGather(void* data, size_t bytesPerRank);
  Status barrier();
  // SetupArgs for a communicator of all ranks (peers: every other rank unless given).
  transport::SetupArgs setupArgs(std::vector<int> peers = {}, int64_t timeoutMs = 20000,
                                 const std::atomic<bool>* abortFlag = nullptr);
};

struct RankOutcome {
  int pid = 0;
  bool exited = false;  // normal exit
  int exitCode = -1;
  int signal = 0;       // terminating signal, 0 if none
  std::string message;  // what the body returned ("" = ok)
};

// Forks n ranks running body; waits at most timeoutSec (then SIGKILLs all, marking a timeout).
std::vector<RankOutcome> runRanks(int n, const std::function<std::string(RankCtx&)>& body,
                                  int timeoutSec = 120);

// Names in /dev/shm that start with "loom-<tag>".
std::vector<std::string> leftoverSegments(const std::string& tag);

// Runs requests to completion: progress, checkPeers every 100 ms, wait between. Stops early with
// Code::kRemoteError "aborted" once *abort is set.
Status drive(transport::Transport* t, const std::vector<transport::Request*>& reqs,
             int64_t timeoutMs, const std::atomic<bool>* abort = nullptr);

// Deterministic test bytes of message `msg` from src to dst.
inline uint8_t patternByte(int src, int dst, int msg, uint64_t i) {
  return static_cast<uint8_t>(src * 131 + dst * 31 + msg * 7 + i * 13 + (i >> 8));
}
void fillPattern(uint8_t* p, uint64_t n, int src, int dst, int msg);
// "" if equal, else where the first difference is.
std::string checkPattern(const uint8_t* p, uint64_t n, int src, int dst, int msg);

double secondsSince(std::chrono::steady_clock::time_point t0);

inline bool contains(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}
inline transport::Request makeRecv(uint8_t* dst, uint64_t n) {
  transport::Request r;
  r.kind = transport::Request::kRecv;
  r.dst = dst;
  r.bytes = n;
  return r;
}
inline transport::Request makeSend(const uint8_t* src, uint64_t n) {
  transport::Request r;
  r.kind = transport::Request::kSend;
  r.src = src;
  r.bytes = n;
  return r;
}

}  // namespace loom::test

// Body-side checks: return a message naming rank, file and line.
#define RANK_CHECK(ctx, cond, ...)                                                              \
  do {                                                                                          \
    if (!(cond))                                                                                \
      return ::loom::strCat("rank ", (ctx).rank, " ", __FILE__, ":", __LINE__, ": " #cond, " ", \
                            ##__VA_ARGS__);                                                     \
  } while (0)
#define RANK_OK(ctx, expr)                                                                         \
  do {                                                                                             \
    ::loom::Status rs_ = (expr);                                                                   \
    if (!rs_.ok())                                                                                 \
      return ::loom::strCat("rank ", (ctx).rank, " ", __FILE__, ":", __LINE__, ": " #expr, " -> ", \
                            rs_.toString());                                                       \
  } while (0)
