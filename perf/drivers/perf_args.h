// Command line of the perf drivers: nccl-tests' short flags plus loom's launch options.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "loom/loom.h"

namespace loom::perf {

struct Options {
  std::string coll;                       // collective name (from the program name or --coll)
  size_t minBytes = 32 << 20;             // -b
  size_t maxBytes = 32 << 20;             // -e
  double stepFactor = 1;                  // -f (1: additive steps of stepBytes)
  size_t stepBytes = 1 << 20;             // -i
  int iters = 20;                         // -n
  int warmup = 1;                         // -w
  int check = 1;                          // -c (0: no checking, #wrong prints N/A)
  std::vector<loomRedOp_t> ops{loomSum};  // -o
  std::vector<loomDataType_t> types{loomFloat32};  // -d
  int root = 0;                                    // -r
  bool blocking = false;         // -z: each call completes before returning (NULL stream)
  std::string algo;              // -a: LOOM_ALGO=<coll>:<algo> before communicator init
  std::string jsonFile;          // -J: one JSON object per row
  int ranks = 0;                 // --ranks N: fork N local ranks (0: MPI env or 1 rank)
  std::string backend = "loom";  // --backend loom|mpi|gloo_ring|gloo_hd
  int timeoutSec = 0;            // --timeout: the launcher kills the ranks after this many seconds
  std::string bind = "auto";     // --bind auto|core|none: forked ranks pinned to a core each
  size_t msgBytes = 0;    // --msg-bytes: sendrecv as messages of at most this many bytes (0: one)
  bool lockstep = false;  // --lockstep 1: each --msg-bytes message its own group, in turn
  bool pairwise = false;  // --pairwise 1: sendrecv with rank ^ 1 (both ways), not next/prev
  bool ipFirst = false;   // --ip-first 1: time the in-place column before the out-of-place one
  bool showHelp = false;
};

// Parses argv into *opts; returns false with a message in *error.
bool parseOptions(int argc, char** argv, Options* opts, std::string* error);
void printUsage(const char* prog);

// "64K" -> 65536 (K, M, G are powers of 1024, as nccl-tests).
bool parseSize(const std::string& text, size_t* bytes);

// The sizes of the sweep, minBytes..maxBytes.
std::vector<size_t> sweepSizes(const Options& opts);

}  // namespace loom::perf
