// Tiny rank harness for the bootstrap and tcp transport tests: runs body(rank) for n ranks as
// forked processes or as threads. A body returns "" on success or a description of what failed.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace loom::testing {

struct RankResult {
  std::string error;   // what the body returned ("" = ok)
  int termSignal = 0;  // signal that ended a forked rank, 0 if it exited
  bool finished = false;
};

using RankBody = std::function<std::string(int rank)>;

// Forks n children running body(rank); kills all of them after timeoutSec.
inline std::vector<RankResult> forkRanks(int n, const RankBody& body, int timeoutSec = 60) {
  std::vector<RankResult> res(n);
  std::vector<pid_t> pids(n, -1);
  std::vector<int> fds(n, -1);
  for (int r = 0; r < n; ++r) {
    int p[2];
    if (pipe(p) != 0) return res;
    pid_t pid = fork();
    if (pid == 0) {
      close(p[0]);
      std::string err = body(r);
      if (err.empty()) err = "OK";
      ssize_t w = write(p[1], err.data(), err.size());
      (void)w;
      _exit(0);
    }
    close(p[1]);
    pids[r] = pid;
    fds[r] = p[0];
  }
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSec);
  for (int r = 0; r < n; ++r) {
    std::string text;
    char buf[4096];
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      end - std::chrono::steady_clock::now())
                      .count();
      if (left <= 0) break;
      pollfd pfd{fds[r], POLLIN, 0};
      if (poll(&pfd, 1, static_cast<int>(left)) <= 0) continue;
      ssize_t k = read(fds[r], buf, sizeof(buf));
      if (k <= 0) break;
      text.append(buf, static_cast<size_t>(k));
    }
    close(fds[r]);
    if (std::chrono::steady_clock::now() >= end) {
      for (pid_t pid : pids) kill(pid, SIGKILL);
    }
    int status = 0;
    waitpid(pids[r], &status, 0);
    if (WIFSIGNALED(status)) res[r].termSignal = WTERMSIG(status);
    res[r].finished = text == "OK" || (!text.empty() && res[r].termSignal == 0);
    res[r].error = text == "OK" ? "" : (text.empty() ? "rank produced no result" : text);
  }
  return res;
}

inline std::vector<RankResult> threadRanks(int n, const RankBody& body) {
  std::vector<RankResult> res(n);
  std::vector<std::thread> th;
  for (int r = 0; r < n; ++r) {
    th.emplace_back([&, r] {
      res[r].error = body(r);
      res[r].finished = true;
    });
  }
  for (auto& t : th) t.join();
  return res;
}

// "" if every rank succeeded, else one line per failed rank.
inline std::string failures(const std::vector<RankResult>& res) {
  std::string out;
  for (size_t r = 0; r < res.size(); ++r) {
    if (!res[r].error.empty() || res[r].termSignal != 0) {
      out += "rank " + std::to_string(r) + ": " + res[r].error +
             (res[r].termSignal ? " (signal " + std::to_string(res[r].termSignal) + ")" : "") +
             "\n";
    }
  }
  return out;
}

}  // namespace loom::testing
