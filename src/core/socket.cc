#include "core/socket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <sstream>

#include "core/params.h"

namespace loom::net {

constexpr int kSliceMs = 50;

int SockAddr::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
  if (family() == AF_INET6)
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
  return 0;
}

void SockAddr::setPort(int port) {
  if (family() == AF_INET) reinterpret_cast<sockaddr_in*>(&storage)->sin_port = htons(port);
  if (family() == AF_INET6) reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port = htons(port);
}

std::string SockAddr::host() const {
  if (!valid()) return "<none>";
  char buf[NI_MAXHOST] = {0};
  if (getnameinfo(raw(), len, buf, sizeof(buf), nullptr, 0, NI_NUMERICHOST) != 0) return "<bad>";
  return buf;
}

std::string SockAddr::toString() const {
  if (family() == AF_INET6) return strCat("[", host(), "]:", port());
  return strCat(host(), ":", port());
}

Status parseHost(const std::string& host, int port, SockAddr* out) {
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string portText = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), portText.c_str(), &hints, &res);
  if (rc != 0 || res == nullptr) {
    return invalidArgument("address '", host,
                           "' is not a numeric IPv4/IPv6 host: ", gai_strerror(rc));
  }
  *out = SockAddr();
  std::memcpy(&out->storage, res->ai_addr, res->ai_addrlen);
  out->len = res->ai_addrlen;
  freeaddrinfo(res);
  return Status();
}

Status parseAddr(const std::string& text, SockAddr* out) {
  std::string host;
  std::string port;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return invalidArgument("address '", text, "' is not [host]:port");
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string::npos) return invalidArgument("address '", text, "' has no :port");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  char* end = nullptr;
  long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 0 || p > 65535) {
    return invalidArgument("address '", text, "' has a bad port");
  }
  return parseHost(host, static_cast<int>(p), out);
}

bool ifnameMatches(const std::string& spec, const std::string& name) {
  if (spec.empty()) return true;
  size_t pos = 0;
  bool exclude = false;
  bool exact = false;
  if (pos < spec.size() && spec[pos] == '^') exclude = true, ++pos;
  if (pos < spec.size() && spec[pos] == '=') exact = true, ++pos;
  std::stringstream ss(spec.substr(pos));
  std::string tok;
  bool listed = false;
  while (std::getline(ss, tok, ',')) {
    if (tok.empty()) continue;
    if (exact ? name == tok : name.compare(0, tok.size(), tok) == 0) listed = true;
  }
  return exclude ? !listed : listed;
}

namespace {

// Default selection (empty spec) in three tiers: ordinary interfaces, then virtual bridges that
// usually do not reach other hosts (docker*, virbr*), then loopback.
int defaultTier(const char* name, bool loopback) {
  if (loopback) return 2;
  return ifnameMatches("docker,virbr", name) ? 1 : 0;
}

Status collect(const std::string& spec, int family, int tier, std::vector<Interface>* out) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return errnoStatus("getifaddrs", errno);
  for (int pass : {AF_INET, AF_INET6}) {
    if (family != 0 && family != pass) continue;
    for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
      if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != pass) continue;
      if ((a->ifa_flags & IFF_UP) == 0) continue;
      bool loop = (a->ifa_flags & IFF_LOOPBACK) != 0;
      if (spec.empty() && defaultTier(a->ifa_name, loop) != tier) continue;
      if (!ifnameMatches(spec, a->ifa_name)) continue;
      Interface itf;
      itf.name = a->ifa_name;
      itf.addr.len = pass == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
      std::memcpy(&itf.addr.storage, a->ifa_addr, itf.addr.len);
      if (pass == AF_INET6) {
        auto* s6 = reinterpret_cast<sockaddr_in6*>(&itf.addr.storage);
        if (IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr)) continue;
      }
      itf.addr.setPort(0);
      out->push_back(itf);
    }
  }
  freeifaddrs(list);
  return Status();
}

}  // namespace

Status findInterfaces(const std::string& spec, int family, std::vector<Interface>* out) {
  out->clear();
  for (int tier = 0; tier < (spec.empty() ? 3 : 1) && out->empty(); ++tier) {
    LOOM_CHECK(collect(spec, family, tier, out));
  }
  return Status();
}

Status chooseInterface(Interface* out) {
  std::string spec = params::socketIfname();
  std::string fam = params::socketFamily();
  int family = 0;
  if (fam == "AF_INET" || fam == "4" || fam == "ipv4")
    family = AF_INET;
  else if (fam == "AF_INET6" || fam == "6" || fam == "ipv6")
    family = AF_INET6;
  else if (!fam.empty())
    return invalidArgument("LOOM_SOCKET_FAMILY=", fam, " is not AF_INET or AF_INET6");
  std::vector<Interface> found;
  LOOM_CHECK(findInterfaces(spec, family, &found));
  if (found.empty()) {
    return systemError("no up network interface with an address matches LOOM_SOCKET_IFNAME='", spec,
                       "'", fam.empty() ? "" : strCat(" and LOOM_SOCKET_FAMILY=", fam));
  }
  *out = found[0];
  return Status();
}

int64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

Deadline Deadline::afterMs(int64_t ms) { return Deadline(ms < 0 ? -1 : nowNs() + ms * 1000000LL); }

bool Deadline::expired() const { return endNs_ >= 0 && nowNs() >= endNs_; }

int Deadline::pollMs(int capMs) const {
  if (endNs_ < 0) return capMs;
  int64_t left = (endNs_ - nowNs() + 999999) / 1000000;
  if (left < 0) left = 0;
  return left < capMs ? static_cast<int>(left) : capMs;
}

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

Status abortedStatus(const std::string& what) {
  return Status(Code::kInternalError, strCat(what, ": aborted (loomCommAbort)"));
}

Status setNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return errnoStatus("fcntl", errno);
  return Status();
}

Status setNoDelay(int fd) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) {
    return errnoStatus("setsockopt(TCP_NODELAY)", errno);
  }
  return Status();
}

Status localAddr(int fd, SockAddr* out) {
  *out = SockAddr();
  out->len = sizeof(out->storage);
  if (getsockname(fd, out->raw(), &out->len) != 0) return errnoStatus("getsockname", errno);
  return Status();
}

Status listenOn(const SockAddr& addr, int backlog, Fd* out, SockAddr* bound) {
  Fd fd(socket(addr.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return errnoStatus("socket", errno);
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd.get(), addr.raw(), addr.len) != 0) {
    return errnoStatus(strCat("bind to ", addr.toString()), errno);
  }
  if (listen(fd.get(), backlog) != 0)
    return errnoStatus(strCat("listen on ", addr.toString()), errno);
  if (bound != nullptr) LOOM_CHECK(localAddr(fd.get(), bound));
  *out = std::move(fd);
  return Status();
}

Status waitFd(int fd, short events, const Deadline& dl, const std::atomic<bool>* abort,
              const char* what) {
  for (;;) {
    if (abort != nullptr && abort->load(std::memory_order_relaxed)) return abortedStatus(what);
    if (dl.expired()) return timeoutError(what, ": timed out");
    pollfd p{fd, events, 0};
    int rc = poll(&p, 1, dl.pollMs(kSliceMs));
    if (rc < 0 && errno != EINTR) return errnoStatus(strCat(what, ": poll"), errno);
    if (rc > 0) return Status();
  }
}

Status acceptConn(int listenFd, const Deadline& dl, const std::atomic<bool>* abort, Fd* out,
                  SockAddr* peer) {
  for (;;) {
    SockAddr a;
    a.len = sizeof(a.storage);
    int fd = accept4(listenFd, a.raw(), &a.len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      out->reset(fd);
      if (peer != nullptr) *peer = a;
      return Status();
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED) {
      return errnoStatus("accept", errno);
    }
    LOOM_CHECK(waitFd(listenFd, POLLIN, dl, abort, "accept"));
  }
}

Status connectTo(const SockAddr& addr, const Deadline& dl, const std::atomic<bool>* abort, Fd* out,
                 bool retryRefused) {
  int backoffMs = 1;
  for (;;) {
    Fd fd(socket(addr.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return errnoStatus("socket", errno);
    int rc = connect(fd.get(), addr.raw(), addr.len);
    int err = rc == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      Status s = waitFd(fd.get(), POLLOUT, dl, abort, "connect");
      if (!s.ok())
        return Status(s.code(), strCat("connect to ", addr.toString(), ": ", s.message()));
      socklen_t len = sizeof(err);
      getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    }
    if (err == 0) {
      *out = std::move(fd);
      return Status();
    }
    if (err == ECONNREFUSED && !retryRefused) {
      return remoteError("connect to ", addr.toString(), ": connection refused");
    }
    bool retry = err == ECONNREFUSED || err == ETIMEDOUT || err == ENETUNREACH ||
                 err == EHOSTUNREACH || err == EAGAIN || err == EINTR || err == ECONNRESET;
    if (!retry) return errnoStatus(strCat("connect to ", addr.toString()), err);
    if (abort != nullptr && abort->load())
      return abortedStatus(strCat("connect to ", addr.toString()));
    if (dl.expired()) {
      return timeoutError("connect to ", addr.toString(), " timed out: ", std::strerror(err));
    }
    usleep(1000 * static_cast<unsigned>(std::min(backoffMs, dl.pollMs(backoffMs))));
    backoffMs = std::min(backoffMs * 2, 100);
  }
}

Status trySend(int fd, const void* data, size_t bytes, size_t* moved) {
  *moved = 0;
  for (;;) {
    ssize_t n = ::send(fd, data, bytes, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) {
      *moved = static_cast<size_t>(n);
      return Status();
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Status();
    if (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN) {
      return remoteError("connection closed (", std::strerror(errno), ")");
    }
    return errnoStatus("send", errno);
  }
}

Status tryRecv(int fd, void* data, size_t bytes, size_t* moved) {
  *moved = 0;
  if (bytes == 0) return Status();
  for (;;) {
    ssize_t n = ::recv(fd, data, bytes, MSG_DONTWAIT);
    if (n > 0) {
      *moved = static_cast<size_t>(n);
      return Status();
    }
    if (n == 0) return remoteError("connection closed");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Status();
    if (errno == ECONNRESET || errno == ENOTCONN || errno == ETIMEDOUT) {
      return remoteError("connection closed (", std::strerror(errno), ")");
    }
    return errnoStatus("recv", errno);
  }
}

Status sendAll(int fd, const void* data, size_t bytes, const Deadline& dl,
               const std::atomic<bool>* abort) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (bytes > 0) {
    size_t n = 0;
    LOOM_CHECK(trySend(fd, p, bytes, &n));
    p += n;
    bytes -= n;
    if (bytes > 0 && n == 0) LOOM_CHECK(waitFd(fd, POLLOUT, dl, abort, "send"));
  }
  return Status();
}

Status recvAll(int fd, void* data, size_t bytes, const Deadline& dl,
               const std::atomic<bool>* abort) {
  auto* p = static_cast<uint8_t*>(data);
  while (bytes > 0) {
    size_t n = 0;
    LOOM_CHECK(tryRecv(fd, p, bytes, &n));
    p += n;
    bytes -= n;
    if (bytes > 0 && n == 0) LOOM_CHECK(waitFd(fd, POLLIN, dl, abort, "recv"));
  }
  return Status();
}

Status randomBytes(void* out, size_t bytes) {
  auto* p = static_cast<uint8_t*>(out);
  while (bytes > 0) {
    ssize_t n = getrandom(p, bytes, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errnoStatus("getrandom", errno);
    }
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return Status();
}

}  // namespace loom::net
