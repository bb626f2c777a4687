// The shm transport's collective primitive (HostCollective) for small all-reduces and barriers
// (LOOM_SHM_DIRECT_BYTES), made when every peer of the communicator is on this host. Schedules use
// it through the registered algorithm "direct" (algo/allreduce_direct.cc): one step.
//
// Every rank of a communicator that lives on one host maps one shared segment with a slot per rank
// and per parity (two sets, alternating between calls). A call writes this rank's contribution and
// a sequence number into its slot, waits until every other slot carries the same sequence number,
// and reduces all slots in rank order into the receive buffer. So every rank computes the same
// bits, a message costs one cache-line hand-off per peer, and no schedule, executor or ring is
// involved: the small-message latency is that of shared memory itself.
//
// Reuse is safe with two parities: a rank writes call d's slot only after it finished call d-1,
// which needed every rank's call d-1 contribution, which each wrote only after finishing call d-2
// (the last reader of this parity).
//
// Every slot also carries the call's descriptor (core/call_desc.h); after the wait every rank
// compares every other rank's with its own, so a mismatched call (counts, datatypes or ops that
// differ, a call one rank skipped) is an error on every rank, before anything is reduced. A rank
// that waits here while a peer is in a different call on another path (a broadcast through the
// rings, say) learns it from Args::peerCheck, which also reports peers that gave up.
//
// Waiting spins a few microseconds, then yields the CPU between checks until spinUs, then sleeps on
// a futex that writers wake only when someone sleeps. After a wait that outlasted the first few
// microseconds the next calls yield from the start (the peer may be waiting for this core). Waits
// check the deadline, the abort flag and whether the peers' processes still run.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/datatype.h"
#include "core/identity.h"
#include "core/status.h"
#include "transports/transport.h"

namespace loom::transport::shm {

class ShmDirect final : public HostCollective {
 public:
  struct Args {
    int rank = 0, nranks = 0;
    std::string tag;  // unique per communicator, no '/'
    std::function<Status(void*, size_t)> allGather;
    std::vector<PeerIdentity> ids;
    const std::atomic<bool>* abortFlag = nullptr;
    const std::atomic<bool>* revokedFlag = nullptr;  // the communicator was revoked: return
    int64_t timeoutMs = 600000;
    int64_t spinUs = 50;
    int64_t peerCheckMs = 500;
    uint64_t maxBytes = 32768;  // largest message (slot size)
    // Called every peerCheckMs while waiting: an error when a peer aborted or is in a different
    // call (the shm transport's view of its peers). May be empty.
    std::function<Status()> peerCheck;
    bool checksum = false;  // LOOM_CHECKSUM: each slot carries a CRC32C that readers check
  };
  // Collective over all ranks (two allGathers). Every rank must call it.
  static Status create(const Args& args, std::unique_ptr<ShmDirect>* out);
  ~ShmDirect() override;
  ShmDirect(const ShmDirect&) = delete;
  ShmDirect& operator=(const ShmDirect&) = delete;

  uint64_t maxBytes() const override { return args_.maxBytes; }
  // recv = send[0] op send[1] op ... op send[p-1] (op must not be avg); in place allowed.
  Status allReduce(const void* send, void* recv, uint64_t count, DataType dt, RedOp op,
                   const CallDesc* call) override;
  // LOOM_FAULT=flip: one bit of this rank's next contribution is flipped after its checksum.
  void armFlip() { flipArmed_ = true; }

 private:
  explicit ShmDirect(const Args& a) : args_(a) {}
  struct Slot;
  Slot* slot(uint64_t seq, int rank) const;
  Status waitAll(uint64_t seq);
  Status stalled(uint64_t seq, bool timedOut) const;
  Status compareCalls(uint64_t seq, const CallDesc& mine) const;
  Status checkSums(uint64_t seq, uint64_t bytes) const;
  bool flipArmed_ = false;

  Args args_;
  void* base_ = nullptr;
  size_t bytes_ = 0;
  size_t stride_ = 0;
  uint64_t seq_ = 0;
  bool oversubscribed_ = false;
  int pureSkips_ = 0;  // calls left that skip the pure spin (see waitAll)
};

}  // namespace loom::transport::shm
