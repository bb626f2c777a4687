// Shared-memory transport (DESIGN.md "Transports"): one ring buffer per directed pair of ranks on
// the same host, in POSIX shared memory.
//
// Protocol. The ring from s to r lives in r's segment (layout.h). The sender copies user bytes into
// the ring and publishes `head`; the receiver copies (or reduces, Request::operand) straight out of
// the ring into the user's buffer and publishes `tail`: one copy on each side, nothing else. Each
// message is a kSlot-byte header (sequence number, size) followed by the payload, padded to kSlot
// so element boundaries never straddle the ring's end. Large messages stream through the ring in
// slices; a zero-byte message is a bare header, so it still orders and synchronises. A receive
// advances Request::doneBytes slice by slice, and dst[0, doneBytes) is final at every point (an
// executor may forward it before the receive completes). A size mismatch between the k-th send
// and the k-th receive of a pair is reported (InvalidUsage) by the receiver.
//
// Single copy (Cross Memory Attach). A message of at least LOOM_SHM_CMA_THRESHOLD bytes to a peer
// that can read our memory is not copied into the ring: the sender writes a descriptor slot (header
// with kFlagCma and the source address) and the receiver copies straight out of the sender's
// buffer with process_vm_readv, or, for a reducing receive, reads it in cache-sized blocks into a
// small local buffer and reduces from there into the destination. The receiver then bumps the
// ring's cmaAcked counter; only then is the send complete (so the sender's buffer is read before
// an executor may reuse it, as Request requires). Sends still complete in FIFO order: a ring send
// queued behind an unacknowledged single-copy send completes with it. Whether a pair may use it is
// decided once at setup: the receiver reads a probe word in the sender's process
// (process_vm_readv fails with EPERM under Yama ptrace_scope >= 1 for non-descendants, or where a
// seccomp profile forbids it) and records the outcome in the ring's cmaState; LOOM_SHM_CMA=auto
// falls back to the ring for that pair (logged at INFO), =on makes setup fail, =off skips it. A
// sender that dies mid-read makes process_vm_readv fail (ESRCH): the receiver reports it as died.
//
// Rewinding. A sender that is about to start a message with its cursor at least kRewindBytes into
// the ring, and finds the ring empty (the receiver consumed everything), writes a rewind header
// there and starts the message at the ring's start; the receiver moves its tail past the rest of
// the ring. So a pair that exchanges messages with pauses between them (every collective but a
// long pipelined stream) reuses the first pages of its ring, which stay in cache, instead of
// walking through all LOOM_SHM_BUFFER_BYTES: rings are faulted in lazily, and a communicator that
// had sent little on a pair took a page fault on both sides for every new 4 KiB of ring (8 ranks,
// 128 KiB Rabenseifner: 10-65 minor faults per call per rank, up to 1.5-2x the time of the same
// schedule on a communicator whose rings were already touched).
//
// Spinning. wait() spins for LOOM_SPIN_US, yielding the CPU every few pauses (more ranks than
// cores is the normal case on small machines), then sleeps on the futex.
//
// Waiting. The fast path makes no system call. Each rank has a doorbell word in its segment; a
// rank that published data or freed space bumps the peer's doorbell and calls FUTEX_WAKE only if
// the peer flagged itself as sleeping. wait() samples nothing itself: progress() records the
// doorbell value it started from, so a bump that happens after that point makes wait() return.
// A rank that also has tcp peers sleeps in one poll() over its sockets and its wake-up FIFO
// (armPoll(): the doorbell says kSleepPoll, and a ringer writes a byte to the FIFO instead of
// FUTEX_WAKE), so a message on either transport wakes it at once. Every rank makes the FIFO next
// to its segment; peers open it read-write (so a write never raises SIGPIPE, even after the owner
// died) and it is unlinked with the segment.
//
// Lifetime. Segments are unlinked as soon as every peer has mapped them, so nothing stays in
// /dev/shm even if a process is killed later. A rank marks its side closed (or aborted, when the
// communicator's abort flag is set) on destruction and on wake() after an abort.
//
// Checks (calls.cc, docs/misuse.md). Every header carries the sender's call descriptor and, with
// LOOM_CHECKSUM=1, the payload's CRC32C, which the receiver computes over the ring as it consumes
// it. Each rank publishes the call it is in in its control block (compared by stalled peers) and,
// when it gives up (poison), the reason, before it marks itself aborted.
//
// Threads: post(), progress(), wait() and checkPeers() of one transport are called by one thread
// at a time; wake() may be called from any thread. Different transports share no state. A rank
// without shm peers still gets a working transport (post() rejects every rank; wait()/wake() work).
// A process forked after setup may drop its copy: only the process that set it up marks it closed.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/socket.h"
#include "transports/shm/direct.h"
#include "transports/shm/layout.h"
#include "transports/transport.h"

namespace loom::transport::shm {

// An mmap'ed segment, unmapped on destruction.
class Mapping {
 public:
  Mapping(uint8_t* base, size_t bytes) : base_(base), bytes_(bytes) {}
  ~Mapping();
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  uint8_t* base() const { return base_; }
  size_t bytes() const { return bytes_; }
  ControlBlock* control() const { return reinterpret_cast<ControlBlock*>(base_); }

 private:
  uint8_t* base_;
  size_t bytes_;
};

class ShmTransport final : public Transport {
 public:
  static Status create(const SetupArgs& args, std::unique_ptr<Transport>* out);
  ~ShmTransport() override;

  Capabilities caps() const override;
  Status post(int peer, Request* req) override;
  Status progress(bool* progressed) override;
  Status wait(int64_t timeoutUs) override;
  Status checkPeers() override;
  void wake() override;
  bool armPoll(std::vector<pollfd>* fds) override;
  void disarmPoll() override;
  // The one-host direct all-reduce (direct.h) when every rank of the communicator is a peer on
  // this host and LOOM_SHM_DIRECT_BYTES > 0; nullptr otherwise.
  HostCollective* hostCollective() override { return direct_.get(); }
  // Call checking (calls.cc): publish this rank's call; give up with a reason peers will read.
  Status beginCall(const CallDesc& call) override;
  void poison(const std::string& reason) override;
  void injectFault(const FaultSpec& f) override;
  // A peer that gave up (aborted), or one in a different call at the same sequence number (its
  // published call), or OK. The direct path calls it while it waits.
  Status checkCalls();

  // Rough constants, not calibrated at run time. The copies on the two sides overlap, so a stream
  // runs at 0.6-0.9x one core's memcpy (tests/transports_shm/shm_transport_perf on the 2-core
  // Debian 12 dev VM, 2026-11-30: 3.8 GB/s against 5.8 GB/s memcpy when the VM was quiet).
  // Latency: 8-byte one-way 4-7 us measured on that (busy) VM; a quiet machine does better.
  static constexpr double kBandwidthGBs = 4.0;
  static constexpr double kLatencyUs = 2.0;

  // Observability for tests: whether sends to `peer` may go single-copy, and how many single-copy
  // messages this transport has received.
  bool singleCopyTo(int peer) const;
  uint64_t singleCopyReceived() const { return cmaReceived_; }
  // Test hook, inherited by forked children: the CMA probe made by rank `rank` (-1: none, -2: every
  // rank) fails as if process_vm_readv returned EPERM.
  static void failCmaProbeForTesting(int rank);

 private:
  struct Peer {
    int rank = -1;
    PeerIdentity id;
    std::unique_ptr<Mapping> remote;  // the peer's segment (its control block, our send ring)
    net::Fd bell;                     // the peer's wake-up FIFO (opened read-write)
    RingCounters* sendCtr = nullptr;  // ring us -> peer, in the peer's segment
    uint8_t* sendData = nullptr;
    uint64_t sendRingBytes = 0;       // the receiver's ring size
    RingCounters* recvCtr = nullptr;  // ring peer -> us, in our segment
    uint8_t* recvData = nullptr;
    // Private cursors (the shared counters are written only by their owner).
    uint64_t sendHead = 0, sendTailSeen = 0, sendSeq = 0;
    uint64_t recvTail = 0, recvHeadSeen = 0, recvSeq = 0;
    bool sendStarted = false;  // header of sends.front() written
    bool recvStarted = false;  // header of recvs.front() consumed
    std::deque<Request*> sends, recvs;
    // Single copy: cmaSend (the peer reads our memory), cmaRecv (we read the peer's).
    bool cmaSend = false, cmaRecv = false;
    uint64_t cmaSent = 0;  // single-copy sends published
    uint64_t cmaRead = 0;  // single-copy receives finished (what we acknowledged)
    bool recvCma = false;  // recvs.front() is single-copy, its payload at recvAddr
    uint64_t recvAddr = 0;
    // Sends fully handed over but not yet complete, in order; `ack`: the cmaAcked value that
    // completes it (0: none needed, it waits only for the ones before it).
    struct Unacked {
      Request* req;
      uint64_t ack;
    };
    std::deque<Unacked> unacked;
    bool busy() const { return !sends.empty() || !recvs.empty() || !unacked.empty(); }
    // LOOM_CHECKSUM: the receive in progress carries a CRC (recvCrcWant); recvCrc so far.
    bool recvCheck = false;
    uint32_t recvCrc = 0, recvCrcWant = 0;
  };

  explicit ShmTransport(const SetupArgs& args);
  Status setup(const SetupArgs& args);
  Status createOwnSegment(const SetupArgs& args);
  Status mapPeers(const SetupArgs& args);
  Status makeBell();
  void unlinkNames(bool includePeers);
  Status readCmaParams();
  Status probeCma(Peer& p);
  void adoptCmaStates();

  bool pumpSends(Peer& p);
  void rewindIfEmpty(Peer& p);
  bool reapAcks(Peer& p);
  Status readSingleCopy(Peer& p, Request* r, bool* moved);
  Status pumpRecvs(Peer& p, bool* moved);
  Status checkStalled(Peer& p);
  Status pumpPeer(Peer& p, bool* moved);
  void ringDoorbell(Peer& p, bool forceWake);
  bool woken();
  void notifyPeer(Peer& p);
  void markState(PeerState s);
  Status abortedError(const Peer& p) const;
  Doorbell* bell() { return own_ ? &own_->control()->doorbell : &localBell_; }

  int rank_ = 0;
  int nranks_ = 1;
  std::string commTag_;
  const std::atomic<bool>* abortFlag_ = nullptr;
  int ownerPid_ = 0;  // the process that set up the transport
  uint64_t ringBytes_ = 0;
  int64_t spinUs_ = 0;  // LOOM_SPIN_US, read once
  bool ownNameLinked_ = false;
  std::unique_ptr<Mapping> own_;  // our segment: control block + rings into us
  net::Fd ownBell_;               // our wake-up FIFO (read-write: wake() writes it too)
  std::vector<Peer> peers_;
  std::vector<int> peerIndex_;  // by rank, -1: not served
  uint32_t lastSeenSeq_ = 0;    // our doorbell when the last progress() started
  std::atomic<uint64_t> wakeCount_{0};
  uint64_t wakeSeen_ = 0;
  Doorbell localBell_{};  // wait()/wake() without peers (no segment)
  // Single copy (LOOM_SHM_CMA, LOOM_SHM_CMA_THRESHOLD). Reducing receives read kCmaBlockBytes at a
  // time into cmaBlock_ (stays in L2), copies read kCmaSliceBytes at a time straight into dst.
  static constexpr uint64_t kCmaBlockBytes = 128 << 10;
  static constexpr uint64_t kCmaSliceBytes = 1 << 20;
  enum class CmaMode { kOff, kAuto, kOn } cmaMode_ = CmaMode::kAuto;
  uint64_t cmaThreshold_ = 0;
  volatile uint64_t probeWord_ = 0;      // read by peers' probes
  std::unique_ptr<uint8_t[]> cmaBlock_;  // reducing single-copy receives land here first
  uint64_t cmaReceived_ = 0;
  std::unique_ptr<ShmDirect> direct_;
  CallDesc currentCall_;  // the call beginCall() published last
  CallDesc lastCall_;     // the one before it
  Status checkLeftovers(const CallDesc& call);
  bool checksum_ = false;  // LOOM_CHECKSUM
  // LOOM_FAULT: flip a bit of the next payload to flipPeer_ (-1 any); posts to a closed peer fail.
  bool flipArmed_ = false;
  int flipPeer_ = -1;
  std::vector<bool> faultClosed_;
  Status checkCrc(const Peer& p, uint64_t bytes) const;
};

}  // namespace loom::transport::shm
