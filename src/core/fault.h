// Fault injection for tests (LOOM_FAULT, docs/misuse.md): a rank kills itself, stops, stalls,
// closes a connection or flips a bit of an outgoing payload when it begins its N-th operation on a
// communicator. The spec is parsed at communicator creation (a bad spec fails it with
// kInvalidArgument naming LOOM_FAULT); the api layer counts operations and fires the faults, the
// transports carry out the ones that concern a connection (close, flip).
//
// Syntax: entries separated by ',', each KIND followed by :key=value options:
//   kill   SIGKILL this process                     options: rank, op, after
//   stop   SIGSTOP this process (hung, not dead)    options: rank, op, after
//   stall  this call sleeps `ms` before it starts   options: rank, op, ms (default: for ever)
//   close  close the connection(s) to `peer`       options: rank, op, peer (default: every peer)
//   flip   flip one bit of the next payload sent   options: rank, op, peer (default: any peer)
// rank: which rank (default: every rank); op: which operation, from 1 (default 1; every call on
// the communicator counts, point-to-point included); after: milliseconds after the operation
// began (kill and stop then happen in the middle of it; default 0, at its start).
// Example: LOOM_FAULT=kill:rank=2:op=3:after=20,flip:rank=0:op=5:peer=1
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace loom {

struct FaultSpec {
  enum class Kind { kKill, kStop, kStall, kClose, kFlip } kind = Kind::kKill;
  int rank = -1;        // -1: every rank
  uint64_t op = 1;      // 1-based operation index on the communicator
  int peer = -1;        // close, flip: -1 every / any peer
  int64_t afterMs = 0;  // kill, stop
  int64_t ms = -1;      // stall: -1 for ever
};
const char* faultKindName(FaultSpec::Kind k);

// Parses LOOM_FAULT's syntax; "" gives no faults. Errors name LOOM_FAULT, the entry and the word.
Status parseFaults(const std::string& spec, std::vector<FaultSpec>* out);

}  // namespace loom
