#include "shm_harness.h"

#include <dirent.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <thread>

#include "core/identity.h"
#include "core/log.h"
#include "core/params.h"

namespace loom::test {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

Status RankCtx::barrier() {
  uint32_t gen = arena->barrierGen.load(std::memory_order_acquire);
  if (arena->barrierCount.fetch_add(1, std::memory_order_acq_rel) + 1 ==
      static_cast<uint32_t>(nranks)) {
    arena->barrierCount.store(0, std::memory_order_relaxed);
    arena->barrierGen.fetch_add(1, std::memory_order_acq_rel);
    return Status();
  }
  auto deadline = Clock::now() + std::chrono::milliseconds(barrierTimeoutMs);
  while (arena->barrierGen.load(std::memory_order_acquire) == gen) {
    if (Clock::now() > deadline)
      return timeoutError("test barrier: rank ", rank, " waited ", barrierTimeoutMs, " ms");
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return Status();
}

// Double-buffered by round parity: a rank can write round k+1 while a slow one still reads round
// k, and cannot reach round k+2 before everyone has left round k.
Status RankCtx::allGather(void* data, size_t bytesPerRank) {
  if (bytesPerRank > kMaxGatherBytes) return invalidArgument("test allGather: too many bytes");
  auto& buf = arena->gather[gatherRound++ % 2];
  auto* d = static_cast<char*>(data);
  std::memcpy(buf[rank], d + rank * bytesPerRank, bytesPerRank);
  LOOM_CHECK(barrier());
  for (int r = 0; r < nranks; ++r) std::memcpy(d + r * bytesPerRank, buf[r], bytesPerRank);
  return Status();
}

transport::SetupArgs RankCtx::setupArgs(std::vector<int> peers, int64_t timeoutMs,
                                        const std::atomic<bool>* abortFlag) {
  transport::SetupArgs a;
  a.rank = rank;
  a.nranks = nranks;
  if (peers.empty()) {
    for (int r = 0; r < nranks; ++r)
      if (r != rank) peers.push_back(r);
  }
  a.peers = peers;
  std::vector<int32_t> pids(nranks);
  pids[rank] = getpid();
  Status s = allGather(pids.data(), sizeof(int32_t));
  (void)s;  // a failed gather leaves pids 0: setup then fails, which the body reports
  PeerIdentity me = localIdentity();
  for (int r = 0; r < nranks; ++r) {
    a.ids.push_back(me);
    a.ids[r].rank = r;
    a.ids[r].pid = pids[r];
  }
  assignHostIndices(&a.ids);
  a.allGather = [this](void* d, size_t b) { return allGather(d, b); };
  a.commTag = tag;
  a.timeoutMs = timeoutMs;
  a.abortFlag = abortFlag;
  return a;
}

std::vector<RankOutcome> runRanks(int n, const std::function<std::string(RankCtx&)>& body,
                                  int timeoutSec) {
  void* mem =
      mmap(nullptr, sizeof(Arena), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return {RankOutcome{0, false, -1, 0, "mmap of the arena failed"}};
  auto* arena = new (mem) Arena();
  std::random_device rd;
  char tag[32];
  snprintf(tag, sizeof(tag), "%x%08x", static_cast<unsigned>(getpid()), rd());
  std::vector<RankOutcome> out(n);
  for (int r = 0; r < n; ++r) {
    fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
      RankCtx ctx;
      ctx.rank = r;
      ctx.nranks = n;
      ctx.arena = arena;
      ctx.tag = tag;
      log::setThreadRank(r);
      std::string msg = body(ctx);
      snprintf(arena->result[r], sizeof(arena->result[r]), "%s", msg.c_str());
      fflush(nullptr);
      _exit(msg.empty() ? 0 : 1);
    }
    out[r].pid = pid;
  }
  auto deadline = Clock::now() + std::chrono::seconds(timeoutSec);
  int left = n;
  bool timedOut = false;
  while (left > 0) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      for (auto& o : out) {
        if (o.pid != pid) continue;
        o.exited = WIFEXITED(status);
        o.exitCode = o.exited ? WEXITSTATUS(status) : -1;
        o.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        --left;
      }
      continue;
    }
    if (!timedOut && Clock::now() > deadline) {
      timedOut = true;
      for (auto& o : out) kill(o.pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (int r = 0; r < n; ++r) {
    out[r].message = arena->result[r];
    if (timedOut && out[r].signal == SIGKILL && out[r].message.empty())
      out[r].message = strCat("rank ", r, " killed after the ", timeoutSec, " s test timeout");
  }
  munmap(mem, sizeof(Arena));
  return out;
}

std::vector<std::string> leftoverSegments(const std::string& tag) {
  std::vector<std::string> names;
  std::string prefix = "loom-" + tag;
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d)) {
      if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) names.push_back(e->d_name);
    }
    closedir(d);
  }
  return names;
}

Status drive(transport::Transport* t, const std::vector<transport::Request*>& reqs,
             int64_t timeoutMs, const std::atomic<bool>* abort) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
  auto lastCheck = Clock::now();
  size_t first = 0;  // requests before `first` are complete
  for (;;) {
    while (first < reqs.size() && reqs[first]->complete) ++first;
    bool all = true;
    for (size_t i = first; i < reqs.size() && all; ++i) all = reqs[i]->complete;
    if (all) return Status();
    if (abort && abort->load()) return remoteError("aborted");
    bool progressed = false;
    LOOM_CHECK(t->progress(&progressed));
    if (progressed) continue;
    auto now = Clock::now();
    if (now - lastCheck > std::chrono::milliseconds(100)) {
      LOOM_CHECK(t->checkPeers());
      lastCheck = now;
    }
    if (now > deadline) return timeoutError("drive: ", reqs.size() - first, " requests pending");
    LOOM_CHECK(t->wait(20000));
  }
}

void fillPattern(uint8_t* p, uint64_t n, int src, int dst, int msg) {
  for (uint64_t i = 0; i < n; ++i) p[i] = patternByte(src, dst, msg, i);
}

std::string checkPattern(const uint8_t* p, uint64_t n, int src, int dst, int msg) {
  for (uint64_t i = 0; i < n; ++i) {
    if (p[i] != patternByte(src, dst, msg, i)) {
      return strCat("message ", msg, " from ", src, " to ", dst, ": byte ", i, " of ", n, " is ",
                    int(p[i]), ", expected ", int(patternByte(src, dst, msg, i)));
    }
  }
  return "";
}

}  // namespace loom::test
