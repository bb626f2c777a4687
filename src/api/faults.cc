// LOOM_FAULT in the api layer (core/fault.h): every operation a communicator begins is counted,
// and the faults of this rank due at it fire before the operation sends anything. kill and stop
// with `after` fire from a helper thread, in the middle of the operation.
#include <signal.h>

#include <chrono>
#include <thread>

#include "api/comm.h"
#include "core/log.h"
#include "core/params.h"

namespace loom::api {
namespace {

void signalSelf(int sig, int64_t afterMs) {
  if (afterMs <= 0) {
    raise(sig);
    return;
  }
  std::thread([sig, afterMs] {
    std::this_thread::sleep_for(std::chrono::milliseconds(afterMs));
    raise(sig);
  }).detach();
}

}  // namespace

Status readFaults(loomComm* c) {
  std::vector<FaultSpec> all;
  LOOM_CHECK(parseFaults(params::fault(), &all));
  c->faults.clear();
  for (const FaultSpec& f : all) {
    if (f.rank >= c->nranks)
      return invalidArgument("LOOM_FAULT: rank=", f.rank, " is outside this communicator of ",
                             c->nranks, " ranks");
    if (f.peer >= c->nranks)
      return invalidArgument("LOOM_FAULT: peer=", f.peer, " is outside this communicator of ",
                             c->nranks, " ranks");
    if (f.rank < 0 || f.rank == c->rank) c->faults.push_back(f);
  }
  return Status();
}

void fireFaults(loomComm* c) {
  const uint64_t op = ++c->opCount;
  for (const FaultSpec& f : c->faults) {
    if (f.op != op) continue;
    LOOM_WARN(COLL, "LOOM_FAULT: rank ", c->rank, " injects ", faultKindName(f.kind),
              " at operation ", op);
    switch (f.kind) {
      case FaultSpec::Kind::kKill:
        signalSelf(SIGKILL, f.afterMs);
        break;
      case FaultSpec::Kind::kStop:
        signalSelf(SIGSTOP, f.afterMs);
        break;
      case FaultSpec::Kind::kStall:
        do {
          std::this_thread::sleep_for(std::chrono::milliseconds(f.ms < 0 ? 1000 : f.ms));
        } while (f.ms < 0);
        break;
      case FaultSpec::Kind::kClose:
      case FaultSpec::Kind::kFlip:
        for (auto* t : c->transports) t->injectFault(f);
        break;
    }
  }
}

}  // namespace loom::api
