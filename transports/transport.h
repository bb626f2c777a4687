// The narrow, non-blocking transport interface (DESIGN.md "Transports").
//
// A Transport serves a set of peers of one communicator. The Executor posts Requests and calls
// progress(); nothing blocks except wait(), which sleeps until something may have changed.
// Requests to one peer complete in FIFO order per direction (the k-th send to b matches b's k-th
// receive from us), so no tags are needed. A receive may reduce on arrival
// (dst = operand (op) incoming), which lets shm reduce straight out of the shared buffer.
#pragma once

#include <poll.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/call_desc.h"
#include "core/datatype.h"
#include "core/fault.h"
#include "core/identity.h"
#include "core/status.h"

namespace loom::transport {

struct Request {
  enum Kind : uint8_t { kSend, kRecv } kind = kSend;
  const uint8_t* src = nullptr;      // kSend: bytes to send
  uint8_t* dst = nullptr;            // kRecv: where the result goes
  const uint8_t* operand = nullptr;  // kRecv: non-null => dst = operand (op) incoming, elementwise
  DataType dtype = DataType::kUint8;
  RedOp op = RedOp::kSum;
  uint64_t bytes = 0;
  // The call this message belongs to (core/call_desc.h): a send carries it in its header, a
  // receive compares the sender's with it (a mismatch is kInvalidUsage naming both calls).
  // Null: an unchecked descriptor.
  const CallDesc* call = nullptr;
  // Written by the transport: bytes finished (sent / received and stored). complete == true once
  // doneBytes == bytes. The Request must stay alive and unmoved until complete.
  uint64_t doneBytes = 0;
  bool complete = false;
};

struct Capabilities {
  const char* name = "";
  double bandwidthGBs = 0;  // per direction, per peer pair, as configured or calibrated
  double latencyUs = 0;
  bool gpuDirect = false;
  bool intraNode = false;
};

// A collective primitive some transports offer over every rank of the communicator at once (shm:
// one shared segment for a communicator that lives on one host, transports/shm/direct.h). Schedules
// reach it through a single OpKind::kHostAllReduce step (algo/allreduce_direct.cc); every rank
// calls it in the same order.
class HostCollective {
 public:
  virtual ~HostCollective() = default;
  // Largest message in bytes.
  virtual uint64_t maxBytes() const = 0;
  // recv = send[0] op send[1] op ... op send[p-1], bit-identical on every rank; in place allowed;
  // count 0 is a barrier. Errors name the late or dead ranks. `call` (may be null) travels with
  // this rank's contribution; every rank compares every other rank's with its own.
  virtual Status allReduce(const void* send, void* recv, uint64_t count, DataType dt, RedOp op,
                           const CallDesc* call) = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual Capabilities caps() const = 0;
  // The transport's collective primitive over the whole communicator, or nullptr (the default).
  virtual HostCollective* hostCollective() { return nullptr; }
  // Queues req to/from `peer` (a communicator rank this transport serves). Zero-byte requests are
  // legal and complete in order.
  virtual Status post(int peer, Request* req) = 0;
  // Moves data for all queued requests without blocking. *progressed = true if anything moved.
  // Errors name the peer rank and host (RemoteError when the peer closed or died).
  virtual Status progress(bool* progressed) = 0;
  // Sleeps until data may have moved, wake() was called, or timeoutUs elapsed.
  virtual Status wait(int64_t timeoutUs) = 0;
  // Cheap liveness check of peers (dead pid on this host, closed socket): RemoteError naming the
  // rank and host of a dead peer.
  virtual Status checkPeers() = 0;
  // Wakes a thread sleeping in wait() or in a joint poll (abort).
  virtual void wake() = 0;
  // Sleeping on several transports at once (a rank with shm peers on its host and tcp peers
  // elsewhere): armPoll() adds to *fds the descriptors whose readiness means this transport may
  // have something to do (it wakes the same way as wait() would) and returns true, or returns
  // false, adding nothing, when it already has something to do (do not sleep). The caller then
  // poll()s all the descriptors and calls disarmPoll() on every transport it armed.
  virtual bool armPoll(std::vector<pollfd>* fds) = 0;
  virtual void disarmPoll() = 0;
  // A checked collective call begins on this rank (before any of its messages). A transport whose
  // peers can see it cheaply publishes it (shm: in the rank's control block), so a peer that is
  // stalled in a different call at the same sequence number (one rank all-reduces on the direct
  // path while another broadcasts through the rings) reports the mismatch from checkPeers(). An
  // error: a message of an earlier call is still unread (the calls did not match: say both ranks
  // thought they were a broadcast's root and only sent).
  virtual Status beginCall(const CallDesc& call) {
    (void)call;
    return Status();
  }
  // This rank gives up on the communicator because of `reason` (a call mismatch): peers waiting on
  // it fail promptly with that reason instead of waiting for their timeout.
  virtual void poison(const std::string& reason) { (void)reason; }
  // LOOM_FAULT (core/fault.h): carries out a close or flip fault on this transport's peers (a
  // peer it does not serve is ignored). Test use only.
  virtual void injectFault(const FaultSpec& f) { (void)f; }
};

// Everything a transport needs to connect. Creation is collective: every rank of the communicator
// calls createShmTransport and then createTcpTransport (with possibly empty `peers`), because both
// may use allGather; then createUcxTransport when any pair uses ucx.
struct SetupArgs {
  int rank = 0;
  int nranks = 1;
  std::vector<int> peers;         // ranks this transport must connect to (excludes rank)
  std::vector<PeerIdentity> ids;  // per rank
  // Collective over all ranks: data holds nranks * bytesPerRank, our slot filled on entry.
  std::function<Status(void* data, size_t bytesPerRank)> allGather;
  std::string commTag;  // unique per communicator, safe in file names (hex)
  int64_t timeoutMs = 600000;
  const std::atomic<bool>* abortFlag = nullptr;
  // Set when the communicator is revoked: a transport's own blocking waits return (wake() is
  // called too). Unlike abortFlag it does not mark this rank's side aborted.
  const std::atomic<bool>* revokedFlag = nullptr;
};

Status createShmTransport(const SetupArgs& args, std::unique_ptr<Transport>* out);
Status createTcpTransport(const SetupArgs& args, std::unique_ptr<Transport>* out);
// Collective over all ranks when any pair of the communicator uses ucx (policy.h); in a build
// without UCX it returns InvalidUsage.
Status createUcxTransport(const SetupArgs& args, std::unique_ptr<Transport>* out);

}  // namespace loom::transport
