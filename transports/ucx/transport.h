// UCX transport (DESIGN.md "Transports", docs/transports.md): loom's messages over UCP's tagged
// send/receive, so every fabric UCX drives (InfiniBand, RoCE, its shared-memory and tcp transports)
// carries them.
//
// Context and worker: one UCP context and one worker per communicator (not shared per process).
// A worker is driven by one thread at a time, the one running the communicator's operations (the
// caller, a host stream's thread, a non-blocking init's thread: UCS_THREAD_MODE_SERIALIZED, no
// locks of loom's), communicators may be driven by different threads, and
// destroying a communicator releases everything it made. The cost is one context per communicator
// (its own registrations), which a split or a second communicator pays again.
//
// Setup (setup.cc, collective): each rank with UCX peers makes its worker and gathers every rank's
// worker address through loom's bootstrap (a round for the lengths, one for the addresses); then it
// creates one endpoint per peer with peer error handling (UCP_ERR_HANDLING_MODE_PEER).
//
// Matching: the k-th message from a to b carries tag (a << 40 | k); b posts its k-th receive from a
// with that tag and a full mask, so messages match in FIFO order per direction as the Transport
// interface requires, whatever order UCX completes them in. Requests complete (Request::complete)
// in posted order. UCX picks eager or rendezvous by size (UCX_RNDV_THRESH); a receive whose size
// differs from what the sender posted is an InvalidUsage error naming the peer (truncation or a
// short message), never silent.
//
// Reducing receives (Request::operand) land in a staging buffer from a small pool and are reduced
// into dst on completion (dst = operand op incoming, the same kernel call as tcp, so the bits are
// the same). Buffers of at least LOOM_UCX_REG_MIN_BYTES are registered with ucp_mem_map through a
// bounded cache (reg_cache.h) and handed to UCX as the operation's memory handle.
//
// Progress and sleep: progress() calls ucp_worker_progress. wait() progresses for LOOM_SPIN_US,
// yielding the CPU, then arms the worker (ucp_worker_arm) and sleeps in poll() on its event fd and
// on an eventfd that wake() writes; armPoll() offers the same two descriptors to the executor's
// joint sleep over several transports. An idle rank therefore uses no CPU.
//
// Errors: a peer's endpoint failing (its process died, its connection reset) makes every later
// call return RemoteError naming the peer's rank and host; checkPeers() also names a dead peer on
// this host by its pid. UCX 1.13 cannot handle peer failure over its shared-memory transports
// alone (ucp_ep_create says unreachable): those endpoints are made without it, and the pid check
// is what names a dead peer there. UCX's own log lines go to loom's log (NET subsystem), not to
// stderr.
#pragma once

#include <ucp/api/ucp.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/socket.h"
#include "transports/transport.h"
#include "transports/ucx/reg_cache.h"

namespace loom::transport::ucx {

// Bits of a tag that carry the message's sequence number; the sender's rank is above them.
constexpr int kSeqBits = 40;
constexpr uint64_t kSeqMask = (uint64_t{1} << kSeqBits) - 1;
inline uint64_t makeTag(int sender, uint64_t seq) {
  return (static_cast<uint64_t>(sender) << kSeqBits) | (seq & kSeqMask);
}

// Owns the UCP context and worker; destroyed after the endpoints.
struct Worker {
  ucp_context_h context = nullptr;
  ucp_worker_h worker = nullptr;
  ~Worker();
};

class UcxTransport final : public Transport {
 public:
  struct PeerConfig {
    int rank = -1;
    PeerIdentity id;
    std::string address;  // the peer's packed worker address
  };
  // Takes the worker; call connect() before use.
  UcxTransport(int rank, PeerIdentity self, int nranks, std::unique_ptr<Worker> w);
  ~UcxTransport() override;
  Status init(const std::vector<PeerConfig>& peers);

  Capabilities caps() const override;
  Status post(int peer, Request* req) override;
  Status progress(bool* progressed) override;
  Status wait(int64_t timeoutUs) override;
  Status checkPeers() override;
  void wake() override;
  bool armPoll(std::vector<pollfd>* fds) override;
  void disarmPoll() override;

  // Observability for tests and logs.
  const RegCache::Stats& regStats() const { return regs_->stats(); }
  // Rough constants, not calibrated: UCX over this machine's loopback tcp; an RDMA fabric
  // (policy.h picks UCX between hosts only then) is faster, which the planner reads from kNet.
  static constexpr double kBandwidthGBs = 1.5;
  static constexpr double kLatencyUs = 8.0;

  // One posted request as UCX sees it; completion callbacks write into it.
  struct Op {
    UcxTransport* self = nullptr;
    Request* req = nullptr;
    int peer = -1;
    bool recv = false;
    bool finished = false;  // UCX completed it (successfully or not)
    ucs_status_t status = UCS_OK;
    ucp_tag_recv_info_t info{};
    uint8_t* staging = nullptr;  // reducing receive: where the bytes land
    void* ucxReq = nullptr;      // UCX's request while in flight (cancelled at teardown)
    RegCache::Entry* reg = nullptr;
  };

 private:
  struct Peer {
    int rank = -1;
    PeerIdentity id;
    ucp_ep_h ep = nullptr;
    uint64_t sendSeq = 0, recvSeq = 0;
    std::deque<Op> sends, recvs;   // posted, not yet complete, in order (deque: stable addresses)
    ucs_status_t failed = UCS_OK;  // set by the endpoint's error handler
    bool errHandling = true;       // UCP_ERR_HANDLING_MODE_PEER (not with UCX_TLS=sm alone)
    UcxTransport* self = nullptr;
  };

  static void onEpError(void* arg, ucp_ep_h ep, ucs_status_t status);
  static void onSend(void* request, ucs_status_t status, void* user);
  static void onRecv(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info,
                     void* user);
  Status startOp(Peer& p, Op& op);
  Status finishOp(Peer& p, Op& op);
  Status settle(Peer& p, std::deque<Op>& q, bool* moved);
  Status peerFailed(Peer& p, ucs_status_t st);
  uint8_t* takeStaging(uint64_t bytes);
  void giveStaging(uint8_t* buf);
  void closeEndpoints();
  bool pollable() const { return efd_ >= 0; }
  bool drive();

  int rank_;
  int nranks_;
  PeerIdentity self_;
  std::unique_ptr<Worker> w_;
  std::unique_ptr<RegCache> regs_;
  std::deque<Peer> peers_;
  std::vector<int> index_;  // rank -> peers_ index, -1 if not served
  int efd_ = -1;            // the worker's event fd (owned by UCX)
  net::Fd wakeFd_;
  int64_t spinUs_ = 50;
  uint64_t completions_ = 0;  // bumped by callbacks: something finished
  uint64_t settled_ = 0;      // completions_ when progress() last settled the queues
  bool anyFailed_ = false;    // an endpoint's error handler ran: stop progressing (drive())
  // Staging buffers for reducing receives: free ones, kept up to kKeepStagingBytes in all.
  struct Staging {
    std::unique_ptr<uint8_t[]> buf;
    uint64_t bytes;
  };
  std::vector<Staging> freeStaging_;
  std::vector<Staging> usedStaging_;
  static constexpr uint64_t kKeepStagingBytes = 64u << 20;
  std::vector<pollfd> pollFds_;
  Status error_;
};

// Whether UCX, configured by the environment (UCX_TLS, UCX_NET_DEVICES), offers an RDMA transport
// (rc, ud, dc: InfiniBand or RoCE) on this host; *what names the transports it found. Cached.
bool seesRdma(std::string* what);
// Routes UCX's log lines to loom's log (idempotent).
void routeUcxLog();
// While one lives, this thread's UCX errors and warnings are logged at TRACE (an expected failure).
struct QuietUcxLog {
  QuietUcxLog();
  ~QuietUcxLog();
};

}  // namespace loom::transport::ucx
