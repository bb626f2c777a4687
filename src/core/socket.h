// Socket utilities shared by the bootstrap and the tcp transport: interface selection
// (LOOM_SOCKET_IFNAME, same grammar as NCCL_SOCKET_IFNAME), addresses (IPv4 and IPv6), and
// listen/accept/connect/send/recv with deadlines and an abort flag. Sockets are always
// non-blocking; the blocking-style helpers poll() in short slices so that *abort is seen within
// ~50 ms. Sends use MSG_NOSIGNAL so a dead peer never raises SIGPIPE.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace loom::net {

// An IPv4 or IPv6 socket address.
struct SockAddr {
  sockaddr_storage storage{};
  socklen_t len = 0;

  int family() const { return storage.ss_family; }
  int port() const;
  void setPort(int port);
  bool valid() const { return len > 0; }
  const sockaddr* raw() const { return reinterpret_cast<const sockaddr*>(&storage); }
  sockaddr* raw() { return reinterpret_cast<sockaddr*>(&storage); }
  // Numeric host, e.g. "192.0.2.2" or "fe80::1%eth0".
  std::string host() const;
  // "192.0.2.2:1234" or "[fd00::2]:1234".
  std::string toString() const;
};

// Parses a numeric host ("10.0.0.1", "fd00::2", "fe80::1%eth0") with a port.
Status parseHost(const std::string& host, int port, SockAddr* out);
// Parses "host:port" or "[host6]:port".
Status parseAddr(const std::string& text, SockAddr* out);

struct Interface {
  std::string name;
  SockAddr addr;  // port 0
};

// True if interface `name` is selected by `spec` (NCCL_SOCKET_IFNAME grammar: comma list of name
// prefixes; a leading ^ excludes the listed names instead; a leading = (after any ^) makes the
// names exact instead of prefixes). An empty spec selects everything.
bool ifnameMatches(const std::string& spec, const std::string& name);

// Up interfaces with an IPv4 or IPv6 address (IPv6 link-local skipped), in getifaddrs order (IPv4
// before IPv6), selected by `spec`; `family` AF_INET/AF_INET6 restricts, 0 accepts both. An empty
// spec means: every non-loopback interface except docker*/virbr* bridges, else those bridges,
// else loopback.
Status findInterfaces(const std::string& spec, int family, std::vector<Interface>* out);
// First interface of findInterfaces(params::socketIfname(), LOOM_SOCKET_FAMILY); errors say what
// the spec matched.
Status chooseInterface(Interface* out);

// Monotonic deadline. A negative timeout means "never".
class Deadline {
 public:
  static Deadline afterMs(int64_t ms);
  static Deadline never() { return Deadline(-1); }
  bool expired() const;
  // Milliseconds left, clipped to [0, capMs]; capMs if never.
  int pollMs(int capMs) const;
  int64_t endNs() const { return endNs_; }

 private:
  explicit Deadline(int64_t endNs) : endNs_(endNs) {}
  int64_t endNs_;
};
int64_t nowNs();

// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// The status returned when *abort was seen.
Status abortedStatus(const std::string& what);

Status setNonBlocking(int fd);
Status setNoDelay(int fd);

// Non-blocking listening socket bound to addr (port 0 picks one); *bound gets the real address.
Status listenOn(const SockAddr& addr, int backlog, Fd* out, SockAddr* bound);
// Accepts one connection (non-blocking result) or fails with kTimeout at the deadline.
Status acceptConn(int listenFd, const Deadline& dl, const std::atomic<bool>* abort, Fd* out,
                  SockAddr* peer = nullptr);
// Connects (retrying refused/unreachable attempts until the deadline, unless retryRefused is
// false: then a refused connection is kRemoteError at once); result is non-blocking.
Status connectTo(const SockAddr& addr, const Deadline& dl, const std::atomic<bool>* abort, Fd* out,
                 bool retryRefused = true);
// Local address of a connected or bound socket.
Status localAddr(int fd, SockAddr* out);

// Whole-buffer transfer on a non-blocking socket, polling until the deadline. A peer that closed
// gives kRemoteError "connection closed" (callers add who the peer is).
Status sendAll(int fd, const void* data, size_t bytes, const Deadline& dl,
               const std::atomic<bool>* abort);
Status recvAll(int fd, void* data, size_t bytes, const Deadline& dl,
               const std::atomic<bool>* abort);

// One non-blocking step. Returns bytes moved (0 if it would block); kRemoteError when the peer
// closed or reset the connection, kSystemError for other failures.
Status trySend(int fd, const void* data, size_t bytes, size_t* moved);
Status tryRecv(int fd, void* data, size_t bytes, size_t* moved);

// Waits until fd is readable (events POLLIN) or writable (POLLOUT), the deadline, or *abort
// (polling in <= 50 ms slices).
Status waitFd(int fd, short events, const Deadline& dl, const std::atomic<bool>* abort,
              const char* what);

// Random bytes from getrandom().
Status randomBytes(void* out, size_t bytes);

}  // namespace loom::net
