// Failure detection and the failed-set agreement of one communicator (docs/failures.md).
//
// Every rank runs one background thread per communicator that sends a small UDP datagram to every
// other rank every LOOM_HEARTBEAT_MS, on the control path (the address the bootstrap chose, so a
// partition of that network is seen like a dead host), and sleeps in poll() between sends. A
// datagram carries the sender's view: the set of ranks it holds failed or gone, whether it has
// revoked the communicator, and whether it is agreeing. A rank that hears nothing from a peer for
// LOOM_HEARTBEAT_TIMEOUT_MS declares it failed: a killed process, a stopped (SIGSTOP) or hung one
// (its heartbeat thread stops with it), or a host behind a partition. Declaring a failure revokes
// the communicator: the flag every wait checks is set, the transports are woken, and every peer
// is told at once. Views merge (a peer's failed set is added to ours), so every survivor ends up
// naming the same ranks; a rank that finds itself in a peer's failed set learns it was excluded,
// and blames nobody else. A rank whose own thread did not run for a while (it was the one stopped,
// or starved) gives every peer a fresh grace period instead of blaming them.
//
// agree() is the explicit agreement step among survivors: each rank repeats its set until every
// rank outside it has said the same set, with sets only growing, so all decide the same set when
// no further failure happens during the round. A failure during the round grows the set and the
// round goes on; a failure right after one rank decided can make that rank's set smaller than a
// later one's (then a shrink over the smaller set fails on connecting and is retried).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/identity.h"
#include "core/socket.h"
#include "core/status.h"

namespace loom::health {

struct MonitorArgs {
  int rank = 0;
  int nranks = 1;
  std::vector<PeerIdentity> ids;  // per rank; ids[rank].address is where the socket binds
  // Collective over the communicator (exchanges the heartbeat ports at creation).
  std::function<Status(void* data, size_t bytesPerRank)> allGather;
  uint64_t key = 0;          // same on every rank of the communicator, different across them
  int64_t intervalMs = 250;  // LOOM_HEARTBEAT_MS (0: no heartbeats; revoke and agree still work)
  int64_t silenceMs = 1500;  // LOOM_HEARTBEAT_TIMEOUT_MS
  std::function<void()> onRevoke;  // wakes the communicator's waits (called without the lock)
  std::atomic<bool>* revokedFlag = nullptr;  // the communicator's; set on revoke (required)
};

class Monitor {
 public:
  // Collective: binds the socket, allGathers the ports and starts the thread.
  static Status create(const MonitorArgs& args, std::unique_ptr<Monitor>* out);
  ~Monitor();  // tells the peers this rank left, stops the thread
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;

  // Set (MonitorArgs::revokedFlag) once the communicator is revoked here or by any peer.
  bool revoked() const { return revoked_.load(std::memory_order_relaxed); }
  // Revokes here and tells every peer. `why` ends up in every later error on this rank.
  void revoke(const std::string& why);
  // Reads the datagrams waiting now (from any thread): a rank just resumed from a stop learns
  // what the others decided before it acts on what its transports say.
  void drain();
  // A failure seen by someone else (a transport found the process gone): declare it now.
  void declareFailed(int rank, const std::string& why);
  // Ranks held failed or gone (ascending), as this rank sees them now.
  std::vector<int> failed() const;
  // The error an operation on a revoked communicator returns: kRemoteError naming the failed
  // ranks, kRevoked when revoked without a failure, or when this rank was itself excluded. OK
  // while not revoked.
  Status verdict() const;
  // Waits up to waitMs for a verdict (a failure declared, a revoke, or a peer that left); returns
  // verdict(), which may still be OK.
  Status awaitVerdict(int64_t waitMs);
  // The agreement step: returns the failed set every survivor agrees on, or kRevoked when the
  // others excluded this rank, or kTimeout naming the ranks that never answered within timeoutMs.
  Status agree(int64_t timeoutMs, std::vector<int>* failed);

 private:
  struct Datagram;
  explicit Monitor(const MonitorArgs& a) : a_(a), revoked_(*a.revokedFlag) {}
  void run();
  // To every peer; those held failed only when toFailed (they hear of it once an interval).
  void sendAll(uint32_t flags, bool toFailed = true);
  void receive(int64_t nowMs);
  void onDatagram(const Datagram& d, const std::vector<uint8_t>& set, int64_t nowMs);
  void checkSilence(int64_t nowMs);
  // Under mu_: marks `rank` failed and returns true if this revoked the communicator.
  bool markFailedLocked(int rank, const std::string& why);
  bool revokeLocked(const std::string& why);
  void afterRevoke();
  std::vector<uint8_t> viewLocked() const;  // failed | left, one byte per rank
  std::string namesLocked(const std::vector<int>& ranks) const;

  MonitorArgs a_;
  net::Fd sock_;
  net::Fd wakeRead_, wakeWrite_;
  std::vector<net::SockAddr> addrs_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool>& revoked_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<uint8_t> failed_, left_;          // per rank
  std::vector<std::string> why_;                // per failed rank
  std::vector<int64_t> lastSeenMs_;             // per rank
  std::vector<std::vector<uint8_t>> peerView_;  // last set each peer sent
  std::vector<uint8_t> peerAgreeing_;
  std::string revokeWhy_;
  bool excluded_ = false;  // a peer holds this rank failed
  std::string excludedBy_;
  bool agreeing_ = false;
  int64_t fastUntilMs_ = 0;   // send every few ms until then (during an agreement)
  int64_t stalledAtMs_ = -1;  // when this rank's own thread was last found to have stalled
};

// LOOM_HEARTBEAT_MS as milliseconds (0: off), and the silence that declares a failure.
int64_t heartbeatIntervalMs();
int64_t heartbeatSilenceMs();

}  // namespace loom::health
