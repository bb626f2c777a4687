// Executor: runs one rank's Schedule over transports. Network steps are posted in schedule order
// per peer (the FIFO matching rule), as soon as their dependencies are done, so independent steps
// and pipeline loops overlap; local steps (copy, reduce) run in this thread when ready. Every wait
// has a deadline (no progress for timeoutMs -> kTimeout naming the ranks waited for) and checks
// the abort flag; dead peers surface as kRemoteError from the transports.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "core/identity.h"
#include "core/status.h"
#include "sched/schedule.h"
#include "transports/transport.h"

namespace loom::sched {

struct ExecContext {
  int rank = 0;
  std::vector<transport::Transport*> transportOf;  // per peer rank (nullptr for self)
  std::vector<transport::Transport*> transports;   // each distinct transport once
  const std::vector<PeerIdentity>* ids = nullptr;  // for error messages (may be null)
  const std::atomic<bool>* abortFlag = nullptr;
  int64_t timeoutMs = 600000;
  int64_t spinUs = 50;
  int64_t peerCheckMs = 500;
};

// buffers[slot] = base pointer of each slot; the scratch slot (2) may be null, then the executor
// allocates Schedule::scratchBytes. dtype/op are used by RecvReduce and Reduce steps.
Status execute(const Schedule& sched, std::vector<uint8_t*> buffers, DataType dtype, RedOp op,
               const ExecContext& ctx);

}  // namespace loom::sched
