// Fork-based rank harness: runs a body in N processes, each with its own communicator, and reports
// per-rank failures. The id is made in rank 0's process and passed through a pipe, so the test
// process itself starts no threads before fork.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "loom/loom.h"

namespace loom::testing {

struct RankOptions {
  std::string transport;         // "", "shm", "tcp", "ucx"
  int64_t commTimeoutMs = 0;     // loomConfig_t.timeoutMs (0: default)
  int64_t killAfterMs = 120000;  // the harness kills every rank after this (a hang fails the test)
  std::vector<std::pair<std::string, std::string>> env;  // set in each rank before anything else
};

struct RankResult {
  int exitCode = -1;  // -1: killed by a signal
  int signal = 0;
  std::string message;  // what the rank wrote to its report pipe
};

// Body: returns "" on success, else a failure message. `report` may be used for extra text.
using RankBody = std::function<std::string(int rank, int nranks, loomComm_t comm)>;

// Runs body on nranks forked processes. Returns the results per rank.
std::vector<RankResult> runRanks(int nranks, const RankBody& body, const RankOptions& opt = {});

// "" when every rank succeeded, else a summary of failures.
std::string failures(const std::vector<RankResult>& results);

}  // namespace loom::testing
