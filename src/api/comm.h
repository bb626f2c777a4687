// The communicator behind loomComm_t, and the operation descriptor every C entry point fills.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/bootstrap.h"
#include "core/heartbeat.h"
#include "core/identity.h"
#include "core/status.h"
#include "loom/loom.h"
#include "plan/overrides.h"
#include "plan/planner.h"
#include "sched/executor.h"
#include "sched/schedule.h"
#include "topo/topology.h"
#include "transports/transport.h"

namespace loom::api {

// One user call (collective or point-to-point).
struct OpDesc {
  sched::CollType coll = sched::CollType::kAllReduce;
  const void* send = nullptr;
  void* recv = nullptr;
  uint64_t count = 0;
  DataType dtype = DataType::kFloat32;
  RedOp op = RedOp::kSum;
  int root = 0;
  int peer = -1;
  bool inPlace = false;
  // kAllToAllv: sendcounts, sdispls, recvcounts, rdispls (4 * nranks elements), copied at call
  // time.
  std::shared_ptr<const std::vector<uint64_t>> vcounts;
  bool reduces() const;
};

// Everything a cached schedule depends on.
// What a schedule depends on: the call's arguments, and whether it runs alone (the planner's
// decision for them is fixed for the communicator's life, so it is not part of the key).
struct ScheduleKey {
  int coll, dtype, op, root, peer, inPlace, alone;
  uint64_t count, chunk;
  bool operator<(const ScheduleKey& o) const {
    return std::tie(count, coll, dtype, op, root, peer, inPlace, alone, chunk) <
           std::tie(o.count, o.coll, o.dtype, o.op, o.root, o.peer, o.inPlace, o.alone, o.chunk);
  }
};

struct CommOptions {
  int64_t timeoutMs = 0;  // <= 0: LOOM_TIMEOUT_MS
  std::string transport;  // "", "shm", "tcp"
  std::string name;
};

}  // namespace loom::api

struct loomComm {
  int rank = 0;
  int nranks = 0;
  std::string name;
  int64_t timeoutMs = 600000;
  // Shared with the communicators shrunk from this one.
  std::shared_ptr<loom::bootstrap::Bootstrap> bootstrap;
  std::string commTag;             // unique per communicator (shm names, tcp handshakes)
  loom::api::CommOptions options;  // as created (a shrunk or grown one inherits them)
  uint64_t shrinks = 0;            // loomCommShrink calls so far (salts the derived tags)
  std::vector<loom::PeerIdentity> ids;
  std::unique_ptr<loom::transport::Transport> shm, tcp;
  std::vector<loom::transport::Transport*> transportOf;
  std::vector<loom::transport::Transport*> transports;
  loom::sched::ExecContext exec;                      // filled once the transports are up
  std::unique_ptr<loom::sched::StepTrace> stepTrace;  // LOOM_STEP_TRACE (exec.trace)
  std::atomic<bool> abortFlag{false};
  // Revoked (here or by a peer, or a peer failed): every wait returns, every later call fails.
  std::atomic<bool> revoked{false};
  std::unique_ptr<loom::health::Monitor> monitor;  // heartbeats, revoke, agreement (nranks > 1)
  std::atomic<int> inFlight{0};
  // Non-blocking init: the thread running it, and its result.
  std::thread initThread;
  std::atomic<bool> initDone{true};
  loom::Status initStatus;
  std::mutex mu;  // guards lastError, asyncError, cache
  std::string lastError;
  loomResult_t asyncError = loomSuccess;
  std::unique_ptr<loom::topo::Topology> topology;  // LOOM_TOPO_FILE, when given
  std::unique_ptr<loom::plan::Planner> planner;
  std::map<loom::api::ScheduleKey, std::shared_ptr<const loom::sched::Schedule>> cache;
};

namespace loom::api {

// Collective creation (bootstrap, transports). On failure *out is left null.
Status commInit(const char* id, int nranks, int rank, const CommOptions& opt, loomComm* comm);
// The part of commInit after the bootstrap: with c->bootstrap, rank, nranks, commTag and options
// set, connects the transports, starts the heartbeat monitor and makes the planner. Shrink uses it
// over a derived bootstrap.
Status commSetup(loomComm* c);
// An operation failed with s: the error to report. Same-host peers whose process is gone are
// declared failed; a remote error waits (bounded by the detection time) for the heartbeat
// monitor's verdict, so the failed rank is named rather than a neighbour that saw it first.
Status afterFailure(loomComm* c, Status s);
// kRevoked / kRemoteError naming the failed ranks once c is revoked, else OK.
Status revokedStatus(const loomComm* c);
// Registry of live communicators, so use after destroy is reported instead of crashing.
void registerComm(loomComm* c);
bool unregisterComm(loomComm* c);
bool isLiveComm(const loomComm* c);
// kInvalidArgument for NULL, kInvalidUsage for a destroyed/unknown communicator.
Status checkComm(const loomComm* c, const char* arg = "comm");
// checkComm, then waits for a non-blocking init to finish and returns its status.
Status usableComm(loomComm* c);
// Waits for a non-blocking init to finish; returns its status.
Status waitInit(loomComm* c);
// Frees transports and the bootstrap (after in-flight operations have left).
void commFree(loomComm* c);

// Builds (or takes from the cache) the schedule of `op` on comm. `alone`: the operation runs by
// itself (not merged into a group), so the planner may also offer the one-host "direct" algorithm.
Status scheduleFor(loomComm* c, const OpDesc& op, bool alone,
                   std::shared_ptr<const sched::Schedule>* out);
// Runs a list of operations as one merged schedule per (dtype, op) class, then applies avg.
Status runOps(loomComm* c, const std::vector<OpDesc>& ops);
// One operation: runOps({op}) without building the list.
Status runOp(loomComm* c, const OpDesc& op);

// Result conversion and last-error bookkeeping (logs the message once).
loomResult_t fail(loomComm* c, const Status& s);
loomResult_t toResult(Code c);
const char* threadLastError();

}  // namespace loom::api
