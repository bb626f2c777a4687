#include "harness/rank_harness.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "core/params.h"

namespace loom::testing {
namespace {

void writeAll(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t k = write(fd, c, n);
    if (k <= 0) return;
    c += k;
    n -= static_cast<size_t>(k);
  }
}

bool readAll(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t k = read(fd, c, n);
    if (k <= 0) return false;
    c += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

[[noreturn]] void child(int rank, int nranks, int idRead, int idWrite, int reportFd,
                        const RankBody& body, const RankOptions& opt) {
  for (const auto& [k, v] : opt.env) setenv(k.c_str(), v.c_str(), 1);
  // The parent may have read parameters before forking (a test that made a communicator itself):
  // read them again, with this rank's environment.
  loom::params::resetCacheForTesting();
  loomUniqueId id;
  if (rank == 0) {
    if (loomGetUniqueId(&id) != loomSuccess) {
      std::string m = std::string("loomGetUniqueId failed: ") + loomGetLastError(nullptr);
      writeAll(reportFd, m.data(), m.size());
      _exit(3);
    }
    for (int i = 1; i < nranks; ++i) writeAll(idWrite, &id, sizeof(id));
  } else if (!readAll(idRead, &id, sizeof(id))) {
    _exit(4);
  }
  loomConfig_t cfg = LOOM_CONFIG_INITIALIZER;
  cfg.timeoutMs = opt.commTimeoutMs;
  if (!opt.transport.empty()) cfg.transport = opt.transport.c_str();
  loomComm_t comm = nullptr;
  loomResult_t r = loomCommInitRankConfig(&comm, nranks, id, rank, &cfg);
  if (r != loomSuccess) {
    std::string m =
        std::string("init: ") + loomGetErrorString(r) + ": " + loomGetLastError(nullptr);
    writeAll(reportFd, m.data(), m.size());
    _exit(5);
  }
  std::string msg = body(rank, nranks, comm);
  loomCommDestroy(comm);
  writeAll(reportFd, msg.data(), msg.size());
  _exit(msg.empty() ? 0 : 1);
}

}  // namespace

std::vector<RankResult> runRanks(int nranks, const RankBody& body, const RankOptions& opt) {
  int idPipe[2];
  if (pipe(idPipe) != 0) return {};
  std::vector<int> pids(nranks), reports(nranks);
  for (int r = 0; r < nranks; ++r) {
    int rep[2];
    if (pipe(rep) != 0) return {};
    pid_t pid = fork();
    if (pid == 0) {
      close(rep[0]);
      child(r, nranks, idPipe[0], idPipe[1], rep[1], body, opt);
    }
    close(rep[1]);
    pids[r] = pid;
    reports[r] = rep[0];
  }
  close(idPipe[0]);
  close(idPipe[1]);
  std::vector<RankResult> out(nranks);
  std::vector<bool> done(nranks, false);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(opt.killAfterMs);
  int left = nranks;
  while (left > 0) {
    for (int r = 0; r < nranks; ++r) {
      if (done[r]) continue;
      int status = 0;
      if (waitpid(pids[r], &status, WNOHANG) == pids[r]) {
        done[r] = true;
        --left;
        if (WIFEXITED(status)) out[r].exitCode = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) out[r].signal = WTERMSIG(status);
      }
    }
    if (left == 0) break;
    if (std::chrono::steady_clock::now() > deadline) {
      for (int r = 0; r < nranks; ++r)
        if (!done[r]) {
          kill(pids[r], SIGKILL);
          out[r].message = "harness: rank did not finish in time (killed); ";
        }
      for (int r = 0; r < nranks; ++r)
        if (!done[r]) waitpid(pids[r], nullptr, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (int r = 0; r < nranks; ++r) {
    char buf[4096];
    ssize_t k;
    while ((k = read(reports[r], buf, sizeof(buf))) > 0) out[r].message.append(buf, k);
    close(reports[r]);
  }
  return out;
}

std::string failures(const std::vector<RankResult>& results) {
  std::string out;
  for (size_t r = 0; r < results.size(); ++r) {
    const RankResult& x = results[r];
    if (x.exitCode == 0 && x.message.empty()) continue;
    out += "rank " + std::to_string(r) + ": exit " + std::to_string(x.exitCode) +
           (x.signal ? " signal " + std::to_string(x.signal) : "") + " " + x.message + "\n";
  }
  if (results.empty()) out = "harness could not start ranks";
  return out;
}

}  // namespace loom::testing
