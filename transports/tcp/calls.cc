// The tcp transport's part in checking calls and payloads (docs/misuse.md): piece headers with
// the call descriptor and CRC32C, giving up with a reason (poison), LOOM_FAULT close and flip.
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/log.h"
#include "kernels/crc32c.h"
#include "transports/tcp/transport.h"

namespace loom::transport::tcp {
namespace {

constexpr uint32_t kHdr = sizeof(PieceHeader);

int64_t nowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// After poison(): read what peers still send until they close too (at most 200 ms), so that closing
// with unread data does not reset the connection before a peer has read the reason.
TcpTransport::~TcpTransport() {
  if (!poisoned_) return;
  const int64_t deadlineUs = nowUs() + 200000;
  char sink[4096];
  for (Peer& p : peers_) {
    for (auto& fd : p.socks) {
      for (;;) {
        ssize_t r = recv(fd.get(), sink, sizeof sink, MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) break;
        const int64_t left = deadlineUs - nowUs();
        if (left <= 0) break;
        if (r < 0) {
          pollfd pf{fd.get(), POLLIN, 0};
          (void)poll(&pf, 1, static_cast<int>(left / 1000) + 1);
        }
      }
    }
  }
}

// A piece's header (with its checksum, LOOM_CHECKSUM) and, under LOOM_FAULT=flip, a copy of its
// payload with one bit flipped to send instead. Runs again if nothing of the piece went out yet.
void TcpTransport::startPiece(Peer& p, Cursor& c, const Item& it, uint64_t k, uint64_t len) {
  const uint8_t* src = it.req->src + k * p.P;
  c.hdr = PieceHeader{static_cast<uint32_t>(it.seq),
                      static_cast<uint32_t>(k),
                      it.req->bytes,
                      it.req->call ? *it.req->call : CallDesc{},
                      0,
                      0};
  if (checksum_ && len > 0) {
    c.hdr.crc = kernels::crc32c(0, src, len);
    c.hdr.flags = kPieceCrc;
  }
  if (flipArmed_ && len > 0 && (flipPeer_ < 0 || flipPeer_ == p.rank)) {
    flipBuf_.assign(src, src + len);
    flipBuf_[0] ^= 1;
    c.from = flipBuf_.data();
    flipArmed_ = false;
  }
}

Status TcpTransport::checkPiece(const Peer& p, const Cursor& c, const Item& it) {
  if ((c.hdr.flags & kPieceCrc) == 0 || c.crc == c.hdr.crc) return Status();
  error_ = systemError(kCorruptMessage, "piece ", c.hdr.piece, " of message #", it.seq, " (",
                       it.req->bytes, " bytes) from rank ", p.rank, " to rank ", rank_,
                       " on the tcp link ", p.id.describe(), " -> ", self_.describe(),
                       " failed its checksum (CRC32C ", c.crc, ", sender's ", c.hdr.crc, ")");
  LOOM_WARN(NET, error_.message());
  return error_;
}

// The reason a poisoning peer sent after its poison header (transport.h), read with a short
// deadline: it was written right behind the header.
Status TcpTransport::poisoned(Peer& p, size_t s, const uint8_t* first, size_t firstBytes) {
  std::string why(std::min<uint64_t>(p.in.cur[s].hdr.bytes, 4096), '\0');
  size_t got = std::min(firstBytes, why.size());  // what the same read put after the header
  if (got > 0) std::memcpy(&why[0], first, got);
  for (int i = 0; i < 100 && got < why.size(); ++i) {
    ssize_t r = recv(p.socks[s].get(), &why[got], why.size() - got, MSG_DONTWAIT);
    if (r > 0) {
      got += static_cast<size_t>(r);
    } else if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      break;
    } else {
      pollfd pf{p.socks[s].get(), POLLIN, 0};
      (void)poll(&pf, 1, 10);
    }
  }
  why.resize(got);
  error_ = remoteError("peer ", p.id.describe(), " gave up on the communicator: ", why);
  LOOM_WARN(NET, error_.message());
  return error_;
}

// Completes the piece socket s is in the middle of (the rest of its header, zeros for the rest of
// its payload), so a poison header can follow; false if the peer does not take it by deadlineUs.
bool TcpTransport::finishPiece(Peer& p, size_t s, int64_t deadlineUs) {
  Cursor& c = p.out.cur[s];
  if (c.hdrDone == 0 && c.off == 0) return true;
  Item* it = locate(p.out, c);
  if (it == nullptr) return true;
  const uint64_t len = pieceLen(p, *it, c.g - it->first);
  static const uint8_t zeros[16384] = {};
  const int fd = p.socks[s].get();
  while (c.hdrDone < kHdr || c.off < len) {
    const bool hdr = c.hdrDone < kHdr;
    const uint8_t* from = hdr ? reinterpret_cast<const uint8_t*>(&c.hdr) + c.hdrDone : zeros;
    const size_t n = hdr ? kHdr - c.hdrDone : std::min<uint64_t>(sizeof zeros, len - c.off);
    ssize_t r = send(fd, from, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (r > 0) {
      if (hdr) {
        c.hdrDone += static_cast<uint32_t>(r);
      } else {
        c.off += static_cast<uint64_t>(r);
      }
      continue;
    }
    if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
    const int64_t left = deadlineUs - nowUs();
    if (left <= 0) return false;
    pollfd pf{fd, POLLOUT, 0};
    (void)poll(&pf, 1, static_cast<int>(left / 1000) + 1);
  }
  c.g += p.socks.size();
  c.hdrDone = 0;
  c.off = 0;
  return true;
}

// Tells every peer why this rank gives up (transport.h, "Giving up"): finishes the pieces in
// flight (for at most 300 ms in all), then the poison header and the reason on every socket.
void TcpTransport::poison(const std::string& reason) {
  const std::string why = reason.substr(0, 4096);
  const int64_t deadlineUs = nowUs() + 300000;
  poisoned_ = true;
  for (Peer& p : peers_) {
    for (size_t s = 0; s < p.socks.size(); ++s) {
      const int fd = p.socks[s].get();
      if (finishPiece(p, s, deadlineUs)) {
        PieceHeader h{kPoisonMark, kPoisonMark, why.size(), CallDesc{}, 0, 0};
        iovec iov[2] = {{&h, kHdr}, {const_cast<char*>(why.data()), why.size()}};
        msghdr m{};
        m.msg_iov = iov;
        m.msg_iovlen = 2;
        ssize_t r = sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)r;  // best effort: the hang-up below reaches the peer either way
      }
      shutdown(fd, SHUT_WR);
    }
  }
  if (error_.ok()) error_ = invalidUsage(reason);
}

// LOOM_FAULT: close shuts the sockets to the peer (every peer when peer < 0) down both ways;
// flip arms the next payload-carrying piece to it.
void TcpTransport::injectFault(const FaultSpec& f) {
  if (f.kind == FaultSpec::Kind::kFlip) {
    flipArmed_ = true;
    flipPeer_ = f.peer;
    return;
  }
  if (f.kind != FaultSpec::Kind::kClose) return;
  for (Peer& p : peers_) {
    if (f.peer >= 0 && p.rank != f.peer) continue;
    for (auto& fd : p.socks) shutdown(fd.get(), SHUT_RDWR);
  }
}

}  // namespace loom::transport::tcp
