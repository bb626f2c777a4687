// TCP transport (DESIGN.md "Transports"): K non-blocking sockets per peer (LOOM_TCP_NSOCKS),
// TCP_NODELAY, authenticated at setup with the communicator's tag.
//
// Wire format. Each direction of a peer pair is a FIFO of messages (one per posted Request). A
// message is cut into pieces of P bytes (LOOM_TCP_PIECE_BYTES; a zero-byte message is one empty
// piece, so it still orders and synchronises). Pieces are numbered globally per direction and
// piece g travels on socket g % K, so each socket carries pieces s, s+K, s+2K, ... in order and
// the receiver, which posts the same message sizes, knows where every piece goes without any
// reassembly buffer. Each piece starts with a 48-byte header (message sequence number, piece
// index, message size, the sender's call descriptor, and with LOOM_CHECKSUM=1 the CRC32C of the
// piece's payload): a receiver whose posted size or call (core/call_desc.h) differs from the
// sender's gets a clear error instead of corrupt data, and so does one whose piece fails its
// checksum (the receiver computes it over the bytes as they arrive, before any reduction).
//
// Giving up (poison). A rank that gives up on the communicator (a call mismatch) writes, on each
// socket that is between pieces, a header with seq = piece = kPoisonMark and `bytes` the length of
// its reason, then the reason, and shuts its sending side down. A receiver that reads such a
// header fails with that reason; one that never reads it sees the hang-up in checkPeers().
//
// Data path. progress() sends with sendmsg(header, user bytes) and receives with
// readv(header, user bytes) straight into the destination. A receive with an operand reduces on
// arrival: bytes land in a per-socket staging buffer and whole elements are reduced into dst
// (dst = operand (op) incoming) with loom::kernels::reduce; a partial element waits in staging.
// Pieces are multiples of every element size, so elements never straddle sockets.
//
// Threads: no progress thread of its own. The Executor's thread calls post/progress/wait; wait()
// poll()s the sockets that have work (POLLIN for posted receives, POLLOUT for pending sends) plus
// an eventfd that wake() signals from any thread.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "core/socket.h"
#include "transports/transport.h"

namespace loom::transport::tcp {

struct PieceHeader {
  uint32_t seq;    // message sequence number (low 32 bits)
  uint32_t piece;  // piece index within the message
  uint64_t bytes;  // message size as the sender posted it
  CallDesc call;   // the sender's call
  uint32_t crc;    // kPieceCrc: CRC32C of this piece's payload (LOOM_CHECKSUM)
  uint32_t flags;  // kPieceCrc
};
static_assert(sizeof(PieceHeader) == 48, "wire header is 48 bytes");
constexpr uint32_t kPieceCrc = 1;
constexpr uint32_t kPoisonMark = 0xffffffffu;

class TcpTransport final : public Transport {
 public:
  struct PeerConfig {
    int rank = -1;
    PeerIdentity id;
    uint64_t pieceBytes = 0;
    std::vector<net::Fd> socks;  // K connected, non-blocking sockets
  };
  TcpTransport(int rank, PeerIdentity self, std::vector<PeerConfig> peers, int nranks);
  ~TcpTransport() override;

  Capabilities caps() const override;
  Status post(int peer, Request* req) override;
  Status progress(bool* progressed) override;
  Status wait(int64_t timeoutUs) override;
  Status checkPeers() override;
  void wake() override;
  bool armPoll(std::vector<pollfd>* fds) override;
  void disarmPoll() override;
  void poison(const std::string& reason) override;
  void injectFault(const FaultSpec& f) override;
  void setChecksum(bool on) { checksum_ = on; }
  Status beginCall(const CallDesc& call) override {
    lastCall_ = currentCall_;
    currentCall_ = call;
    return Status();
  }

  Status initWakeFd();

  // Rough constants, not calibrated per machine: what tests/transports_tcp/tcp_stream_perf
  // measured over loopback on the 2-core development VM (one-way 64 MiB stream ~1 GB/s, 8-byte
  // ping-pong ~5 us half round trip; a real NIC has more latency).
  static constexpr double kBandwidthGBs = 1.0;
  static constexpr double kLatencyUs = 10.0;

 private:
  struct Item {
    Request* req;
    uint64_t seq;
    uint64_t first;    // global index of its first piece
    uint64_t npieces;  // >= 1
  };
  struct Cursor {
    uint64_t g = 0;     // next global piece this socket moves
    uint64_t item = 0;  // absolute index of the Item holding g (advanced lazily)
    uint32_t hdrDone = 0;
    uint64_t off = 0;  // payload bytes of piece g moved (received, for receives)
    PieceHeader hdr{};
    uint32_t crc = 0;               // receives: CRC32C of the piece's payload so far
    const uint8_t* from = nullptr;  // sends: payload source other than the user's (LOOM_FAULT)
  };
  struct Stream {
    std::deque<Item> q;
    uint64_t base = 0;  // absolute index of q.front()
    uint64_t nextPiece = 0;
    uint64_t nextSeq = 0;
    std::vector<Cursor> cur;  // per socket
  };
  struct Peer {
    int rank = -1;
    PeerIdentity id;
    uint64_t P = 0;
    std::vector<net::Fd> socks;
    std::vector<std::vector<uint8_t>> staging;  // per socket, receives with an operand
    std::vector<size_t> fill;                   // bytes in staging not yet reduced
    Stream out, in;
  };

  Item* locate(Stream& st, Cursor& c);
  uint64_t pieceLen(const Peer& p, const Item& it, uint64_t k) const;
  Status pumpSend(Peer& p, size_t s, bool* moved);
  Status pumpRecv(Peer& p, size_t s, bool* moved);
  Status receivePiece(Peer& p, size_t s, Item& it, bool* pieceDone, size_t* movedBytes);
  void settle(Peer& p, Stream& st, bool recv);
  Status peerError(const Peer& p, const Status& s);
  Status poisoned(Peer& p, size_t s, const uint8_t* got, size_t gotBytes);
  bool finishPiece(Peer& p, size_t s, int64_t deadlineUs);

  int rank_;
  int nranks_;
  PeerIdentity self_;
  std::deque<Peer> peers_;  // deque: Peer is not cheaply movable
  std::vector<int> index_;  // rank -> peers_ index, -1 if not served
  void addPollFds(std::vector<pollfd>* fds);
  void drainWake();
  std::vector<pollfd> pollFds_;  // wait()'s, kept to avoid allocating
  net::Fd wakeFd_;
  Status error_;
  bool checksum_ = false;  // LOOM_CHECKSUM
  bool poisoned_ = false;  // poison() ran: the destructor drains before closing (no reset)
  CallDesc currentCall_, lastCall_;  // a leftover message of the last call is named as such
  // LOOM_FAULT=flip: the next piece with a payload to flipPeer_ (-1 any) goes out of flipBuf_
  // with one bit flipped (after its checksum was taken).
  bool flipArmed_ = false;
  int flipPeer_ = -1;
  std::vector<uint8_t> flipBuf_;
  void startPiece(Peer& p, Cursor& c, const Item& it, uint64_t k, uint64_t len);
  Status checkPiece(const Peer& p, const Cursor& c, const Item& it);
};

}  // namespace loom::transport::tcp
