// Executor: runs one rank's Schedule over transports. Network steps are posted in schedule order
// per peer (the FIFO matching rule), as soon as their dependencies are done, so independent steps
// and pipeline loops overlap; local steps (copy, reduce) run in this thread when ready. Every wait
// has a deadline (no progress for timeoutMs -> kTimeout naming the ranks waited for) and checks
// the abort flag; dead peers surface as kRemoteError from the transports.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/identity.h"
#include "core/status.h"
#include "sched/schedule.h"
#include "transports/transport.h"

namespace loom::sched {

// LOOM_STEP_TRACE: when and how long each step of every schedule run took, appended to a file as
// text, one line per step: "rank call step op peer bytes start_us end_us". The times are
// microseconds from the start of that run (call); start is when the step was handed to its
// transport (send, recv, recvreduce) or began (copy, reduce), end when its completion was seen.
class StepTrace {
 public:
  // Appends to `path` (created if absent) after a "#" header line; a path that cannot be opened
  // is kInvalidArgument naming LOOM_STEP_TRACE.
  static Status open(const std::string& path, int rank, int nranks,
                     std::unique_ptr<StepTrace>* out);
  ~StepTrace();
  StepTrace(const StepTrace&) = delete;
  StepTrace& operator=(const StepTrace&) = delete;
  int rank() const { return rank_; }
  uint64_t nextCall() { return calls_++; }
  // One run's lines in one write (O_APPEND), so ranks sharing a file do not interleave them.
  void write(const std::string& lines);

 private:
  StepTrace(int fd, int rank) : fd_(fd), rank_(rank) {}
  int fd_;
  int rank_;
  uint64_t calls_ = 0;
};

// One LOOM_STEP_TRACE line (with its newline), and the header's field list; loom-plan's simulated
// trace writes the same lines.
std::string stepTraceLine(int rank, uint64_t call, size_t step, OpKind op, int peer, uint64_t bytes,
                          double startUs, double endUs);
inline constexpr const char* kStepTraceFields = "rank call step op peer bytes start_us end_us";

struct ExecContext {
  int rank = 0;
  std::vector<transport::Transport*> transportOf;  // per peer rank (nullptr for self)
  std::vector<transport::Transport*> transports;   // each distinct transport once
  // The collective primitive over every rank (kHostAllReduce steps), or nullptr.
  transport::HostCollective* host = nullptr;
  const std::vector<PeerIdentity>* ids = nullptr;  // for error messages (may be null)
  const std::atomic<bool>* abortFlag = nullptr;
  const std::atomic<bool>* revokedFlag = nullptr;  // set: waits return kRevoked
  int64_t timeoutMs = 600000;
  int64_t spinUs = 50;
  int64_t peerCheckMs = 500;
  StepTrace* trace = nullptr;  // LOOM_STEP_TRACE (null: off)
};

// buffers[slot] = base pointer of each slot; the scratch slot (2) may be null, then the executor
// allocates Schedule::scratchBytes. dtype/op are used by RecvReduce, Reduce and HostAllReduce
// steps. A schedule of one HostAllReduce step (the "direct" algorithms) goes straight to ctx.host.
// `call` (may be null: unchecked) is the call every message of this run carries and every
// receive checks (core/call_desc.h).
Status execute(const Schedule& sched, std::vector<uint8_t*> buffers, DataType dtype, RedOp op,
               const ExecContext& ctx, const CallDesc* call = nullptr);
// One operation's schedule over its send and receive buffers (slots 0 and 1).
Status execute(const Schedule& sched, const void* send, void* recv, DataType dtype, RedOp op,
               const ExecContext& ctx, const CallDesc* call = nullptr);

}  // namespace loom::sched
