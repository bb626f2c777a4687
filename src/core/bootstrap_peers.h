// Internal to the bootstrap: BootstrapImpl, the rank side after the rendezvous. Each connection
// carries data one way (from the rank that opened it), starts with the job key, and is refused
// and logged when the key is wrong. Every blocking call pumps all connections (drains incoming
// frames into per-peer inboxes, flushes outgoing ones), so ranks sending to each other at the
// same time never deadlock. allGather is a ring over persistent connections: n-1 steps.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/bootstrap.h"
#include "core/bootstrap_wire.h"

namespace loom::bootstrap::detail {

using net::Deadline;
using net::Fd;

struct Msg {
  int32_t tag;
  std::vector<uint8_t> data;
};

struct Conn {
  Fd fd;
  net::SockAddr from;
  int peer = -1;
  bool outgoing = false;
  bool authed = false;
  bool root = false;  // a message from the root service
  std::vector<uint8_t> in;
  std::vector<uint8_t> out;
  size_t outSent = 0;
};

class BootstrapImpl : public Bootstrap {
 public:
  BootstrapImpl(int rank, int nranks, int64_t timeoutMs, const std::atomic<bool>* abort,
                const uint8_t* key, Fd listen)
      : rank_(rank),
        nranks_(nranks),
        timeoutMs_(timeoutMs),
        abort_(abort),
        listen_(std::move(listen)),
        sendConn_(nranks, nullptr),
        inbox_(nranks),
        inClosed_(nranks, false),
        outClosed_(nranks, false),
        inConnected_(nranks, false) {
    std::memcpy(key_, key, sizeof(key_));
  }

  int rank() const override { return rank_; }
  int nranks() const override { return nranks_; }
  const std::vector<PeerIdentity>& peers() const override { return peers_; }

  Status allGather(void* data, size_t bytesPerRank) override;
  Status barrier() override;
  Status send(int peer, int tag, const void* data, size_t bytes) override;
  Status recv(int peer, int tag, void* data, size_t bytes) override;
  Status allGatherSub(const std::vector<int>& ranks, int32_t tag, void* data, size_t bytesPerRank,
                      const std::atomic<bool>* abort) override;
  void setAbortFlag(const std::atomic<bool>* abort) override {
    std::lock_guard<std::mutex> g(mu_);
    abort_ = abort;
  }

  Status awaitRoot(const Deadline& dl, const std::string& root, int* next);
  Status connectRing(const Deadline& dl);
  Status exchangeIdentities(const PeerIdentity& me, const std::string& listenAddr);

  std::vector<PeerIdentity> peers_;
  std::vector<net::SockAddr> listenAddrs_;

 private:
  Deadline opDeadline() const { return Deadline::afterMs(timeoutMs_ > 0 ? timeoutMs_ : -1); }
  std::string who(int peer) const {
    return peers_[peer].hostname.empty() ? strCat("rank ", peer) : peers_[peer].describe();
  }
  Status pumpOnce(const Deadline& dl, const std::string& what, int waitPeer);
  void readConn(Conn* c, bool* drop);
  bool parseFrames(Conn* c);
  bool parseRoot(Conn* c);
  Status ensureSendConn(int peer, const Deadline& dl);
  Status sendLocked(int peer, int32_t tag, const void* data, size_t bytes, const Deadline& dl,
                    const std::string& what);
  Status recvLocked(int peer, int32_t tag, void* data, size_t bytes, const Deadline& dl,
                    const std::string& what);
  Status ringLocked(const std::vector<int>& ranks, int32_t tag, void* data, size_t bytesPerRank);

  const int rank_;
  const int nranks_;
  const int64_t timeoutMs_;
  const std::atomic<bool>* abort_;  // guarded by mu_ once created
  uint8_t key_[wire::kKeyBytes];
  Fd listen_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Conn>> conns_;
  std::vector<Conn*> sendConn_;
  std::vector<std::deque<Msg>> inbox_;
  std::vector<bool> inClosed_, outClosed_, inConnected_;
  bool rootDone_ = false;
  Code rootCode_ = Code::kOk;
  std::vector<uint8_t> rootBody_;
};

// The root's one message: header, then code and body; the root closes the connection after it.

}  // namespace loom::bootstrap::detail
