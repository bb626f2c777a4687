// Call checking in the api layer (core/call_desc.h, docs/misuse.md): every collective call gets
// the next number of its communicator and a descriptor that the transports put in front of every
// message; a receiver that finds a different call there fails with both calls named. A rank that
// sees a mismatch or a corrupted message (LOOM_CHECKSUM), or hears of one from a peer, gives up
// on the communicator: it sets the abort
// flag (its later calls fail at once, with the reason) and its transports tell the peers why, so
// ranks waiting on it fail within the detection bound instead of waiting for the timeout.
#include <string>

#include "api/comm.h"
#include "core/log.h"
#include "core/params.h"
#include "sched/executor.h"

namespace loom::api {
namespace {

bool rooted(sched::CollType c) {
  return c == sched::CollType::kBroadcast || c == sched::CollType::kReduce ||
         c == sched::CollType::kGather || c == sched::CollType::kScatter;
}

// LOOM_CHECK_CALLS=strict: an empty message to and from every peer, each carrying the call, so
// every rank compares its call with every other rank's before the call's own schedule runs.
Status exchangeCalls(loomComm* c, const CallDesc& call) {
  sched::Schedule s;
  s.rank = c->rank;
  s.nranks = c->nranks;
  for (int q = 0; q < c->nranks; ++q) {
    if (q == c->rank) continue;
    s.send(q, {}, 0);
    s.recv(q, {}, 0);
  }
  return sched::execute(s, nullptr, nullptr, DataType::kUint8, RedOp::kSum, c->exec, &call);
}

}  // namespace

Status readCheckCalls(loomComm* c) {
  const std::string v = params::checkCalls();
  if (v == "on" || v.empty()) {
    c->checkCalls = loomComm::CheckCalls::kOn;
  } else if (v == "strict") {
    c->checkCalls = loomComm::CheckCalls::kStrict;
  } else if (v == "off") {
    c->checkCalls = loomComm::CheckCalls::kOff;
  } else {
    return invalidArgument("LOOM_CHECK_CALLS='", v, "' is not one of on, strict, off");
  }
  return Status();
}

CallDesc nextCall(loomComm* c, const OpDesc& op, bool checked) {
  CallDesc d;
  if (op.coll == sched::CollType::kSend || op.coll == sched::CollType::kRecv) return d;
  d.seq = ++c->callSeq;
  d.checked = checked && c->checkCalls != loomComm::CheckCalls::kOff ? 1 : 0;
  d.coll = static_cast<uint8_t>(op.coll);
  // All-to-all-v's counts are per peer and differ between ranks by design.
  d.count = op.coll == sched::CollType::kAllToAllv ? 0 : op.count;
  d.dtype = static_cast<uint8_t>(op.dtype);
  if (op.reduces()) d.op = static_cast<uint8_t>(op.op);
  if (rooted(op.coll)) d.root = op.root;
  if (op.coll == sched::CollType::kBarrier) d.dtype = 0;
  return d;
}

Status beginCall(loomComm* c, const CallDesc& call) {
  if (c->abortFlag.load(std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> g(c->mu);
    if (!c->gaveUp.empty())
      return invalidUsage("this communicator is unusable: rank ", c->rank, " gave up on it after ",
                          c->gaveUp);
  }
  if (c->checkCalls == loomComm::CheckCalls::kOff) return Status();
  for (auto* t : c->transports) LOOM_CHECK(t->beginCall(call));
  if (c->checkCalls == loomComm::CheckCalls::kStrict && call.checked && c->nranks > 1)
    return exchangeCalls(c, call);
  return Status();
}

Status giveUpOnMisuse(loomComm* c, Status s) {
  size_t at = s.message().find(kCallMismatch);
  if (at == std::string::npos) at = s.message().find(kCorruptMessage);
  if (at == std::string::npos) return s;
  {
    std::lock_guard<std::mutex> g(c->mu);
    if (!c->gaveUp.empty()) return s;
    c->gaveUp = s.message().substr(at);
  }
  LOOM_WARN(COLL, "rank ", c->rank, " gives up on communicator ",
            c->name.empty() ? std::string("(unnamed)") : c->name, ": ", s.message());
  c->abortFlag = true;
  for (auto* t : c->transports) t->poison(s.message().substr(at));
  return s;
}

}  // namespace loom::api
