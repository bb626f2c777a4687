// The communicator behind loomComm_t, and the operation descriptor every C entry point fills.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/bootstrap.h"
#include "core/call_desc.h"
#include "core/fault.h"
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

struct DeviceStaging;

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
  // Set when a buffer is GPU memory: the op runs on host copies (api/device_staging.h).
  std::shared_ptr<const DeviceStaging> staging;
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
  std::string transport;  // "", "shm", "tcp", "ucx" (transports/policy.h)
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
  std::unique_ptr<loom::transport::Transport> shm, tcp, ucx;
  bool ucxRdma = false;  // ucx carries the inter-host pairs because every rank sees RDMA
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
  // Call checking (core/call_desc.h, api/calls.cc): the sequence number of the last collective
  // call, and why this rank gave up on the communicator after a call mismatch (guarded by mu;
  // set once, with abortFlag).
  uint64_t callSeq = 0;
  std::string gaveUp;
  enum class CheckCalls { kOff, kOn, kStrict } checkCalls = CheckCalls::kOn;  // LOOM_CHECK_CALLS
  // LOOM_FAULT (core/fault.h, api/faults.cc): this rank's faults, and operations begun so far.
  std::vector<loom::FaultSpec> faults;
  uint64_t opCount = 0;
  // A destroyed communicator's memory is never handed to a new one (api/handles.h), so a stale
  // handle can never alias a live communicator: it stays kInvalidUsage.
  static void* operator new(size_t bytes);
  static void* operator new(size_t bytes, const std::nothrow_t&) noexcept;
  static void operator delete(void* p) noexcept;
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

// Call checking (api/calls.cc). The descriptor of `op` as call number ++c->callSeq (collectives;
// point-to-point calls take no number and are unchecked, as are calls merged into a group).
CallDesc nextCall(loomComm* c, const OpDesc& op, bool checked);
// Reads LOOM_CHECK_CALLS into c->checkCalls (kInvalidArgument for a bad value).
Status readCheckCalls(loomComm* c);
// Publishes `call` to the transports (Transport::beginCall); an error if this rank already gave
// up on the communicator. With LOOM_CHECK_CALLS=strict, also exchanges `call` with every peer.
Status beginCall(loomComm* c, const CallDesc& call);
// After a failed call: when `s` is (or reports) a call mismatch or a corrupted message, this rank
// gives up on the communicator (abort flag; the transports tell the peers why). Returns s.
Status giveUpOnMisuse(loomComm* c, Status s);

// LOOM_FAULT (api/faults.cc): reads this rank's faults at creation (kInvalidArgument for a bad
// spec); fireFaults() counts an operation and carries out the faults due at it.
Status readFaults(loomComm* c);
void fireFaults(loomComm* c);

// Result conversion and last-error bookkeeping (logs the message once).
loomResult_t fail(loomComm* c, const Status& s);
loomResult_t toResult(Code c);
const char* threadLastError();

}  // namespace loom::api
