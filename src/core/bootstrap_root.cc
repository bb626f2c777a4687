// The root rendezvous service behind makeUniqueId, and the unique id's text form.
//
// makeUniqueId listens on the chosen interface and starts one detached thread that serves one
// communicator: it accepts connections, refuses (and logs) any that does not present the job key,
// collects one hello per rank, and when all nranks are in, sends every rank the table and exits.
// If a rank that said hello disconnects first, or the earliest rank deadline passes, it tells the
// others why (naming the ranks that never arrived) and exits; with no rank at all it exits after
// LOOM_TIMEOUT_MS.
#include <poll.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <thread>

#include "core/bootstrap.h"
#include "core/bootstrap_wire.h"
#include "core/log.h"
#include "core/params.h"

namespace loom::bootstrap {
namespace {

using net::Deadline;
using net::Fd;

struct Pending {
  Fd fd;
  net::SockAddr from;
  std::vector<uint8_t> in;
  bool authed = false;
  int rank = -1;  // >= 0 once its hello is complete
};

class RootService {
 public:
  RootService(Fd listen, const uint8_t* key, int64_t lifetimeMs)
      : listen_(std::move(listen)), deadline_(Deadline::afterMs(lifetimeMs)) {
    std::memcpy(key_, key, sizeof(key_));
  }
  void run();

 private:
  void onReadable(Pending* c, bool* drop);
  bool parseHello(Pending* c);
  void reply(Pending* c, Code code, const std::vector<uint8_t>& body);
  void failAll(Code code, const std::string& msg);
  std::vector<int> missing() const;

  Fd listen_;
  uint8_t key_[wire::kKeyBytes];
  Deadline deadline_;
  int nranks_ = 0;
  int arrived_ = 0;
  std::vector<std::unique_ptr<Pending>> conns_;
  std::vector<wire::RankHello> hellos_;
  bool done_ = false;
};

std::vector<int> RootService::missing() const {
  std::vector<int> out;
  for (int r = 0; r < nranks_; ++r) {
    if (hellos_[r].rank < 0) out.push_back(r);
  }
  return out;
}

void RootService::reply(Pending* c, Code code, const std::vector<uint8_t>& body) {
  wire::Writer w;
  w.put<uint32_t>(static_cast<uint32_t>(code));
  w.put<uint32_t>(static_cast<uint32_t>(body.size()));
  w.bytes(body.data(), body.size());
  Status s =
      net::sendAll(c->fd.get(), w.buf.data(), w.buf.size(), Deadline::afterMs(10000), nullptr);
  if (!s.ok()) LOOM_WARN(INIT, "bootstrap root: reply to ", c->from.toString(), ": ", s.message());
  c->fd.reset();
}

void RootService::failAll(Code code, const std::string& msg) {
  LOOM_WARN(INIT, "bootstrap root: ", msg);
  std::vector<uint8_t> text(msg.begin(), msg.end());
  for (auto& c : conns_) {
    if (c->rank >= 0 && c->fd.valid()) reply(c.get(), code, text);
  }
  done_ = true;
}

bool RootService::parseHello(Pending* c) {
  uint32_t len = 0;
  std::memcpy(&len, c->in.data() + 4 + wire::kKeyBytes, 4);
  if (c->in.size() < wire::kHelloPrefix + len) return false;
  wire::Reader r(c->in.data() + wire::kHelloPrefix, len);
  wire::RankHello h;
  auto refuse = [&](const std::string& why) {
    LOOM_WARN(INIT, "bootstrap root: refused rank hello from ", c->from.toString(), ": ", why);
    std::string m = strCat("bootstrap root refused this rank: ", why);
    reply(c, Code::kInvalidUsage, std::vector<uint8_t>(m.begin(), m.end()));
    return true;
  };
  if (!(r.get(&h.rank) && r.get(&h.nranks) && r.get(&h.timeoutMs) && r.get(&h.elapsedMs) &&
        wire::getIdentity(&r, &h.id, &h.listenAddr) && r.done())) {
    return refuse("malformed hello");
  }
  if (h.nranks <= 0 || h.rank < 0 || h.rank >= h.nranks) {
    return refuse(strCat("rank ", h.rank, " outside 0..nranks-1 (nranks ", h.nranks, ")"));
  }
  if (nranks_ == 0) {
    nranks_ = h.nranks;
    hellos_.resize(nranks_);
  } else if (h.nranks != nranks_) {
    return refuse(strCat("rank ", h.rank, " says nranks ", h.nranks, " but others said ", nranks_));
  }
  if (hellos_[h.rank].rank >= 0) return refuse(strCat("rank ", h.rank, " joined twice"));
  if (h.timeoutMs > 0) {
    // The earliest rank deadline, so that ranks hear which ranks are missing before they give up.
    Deadline d = Deadline::afterMs(std::max<int64_t>(0, h.timeoutMs - h.elapsedMs));
    if (arrived_ == 0 || d.endNs() < deadline_.endNs() || deadline_.endNs() < 0) deadline_ = d;
  }
  c->rank = h.rank;
  hellos_[h.rank] = std::move(h);
  ++arrived_;
  return true;
}

void RootService::onReadable(Pending* c, bool* drop) {
  uint8_t buf[4096];
  for (;;) {
    size_t n = 0;
    Status s = net::tryRecv(c->fd.get(), buf, sizeof(buf), &n);
    if (!s.ok()) {
      if (c->rank >= 0) {
        const auto& id = hellos_[c->rank].id;
        failAll(Code::kRemoteError,
                strCat(id.describe(), " left the rendezvous before all ", nranks_,
                       " ranks arrived (missing ranks ", wire::rankList(missing()), ")"));
      } else {
        LOOM_WARN(INIT, "bootstrap root: refused connection from ", c->from.toString(),
                  ": closed before presenting the job key (", c->in.size(), " bytes)");
      }
      *drop = true;
      return;
    }
    if (n == 0) return;
    if (c->rank >= 0) continue;  // nothing more expected; keep draining
    c->in.insert(c->in.end(), buf, buf + n);
    if (!c->authed && c->in.size() >= wire::kHelloPrefix) {
      uint32_t magic = 0, len = 0;
      std::memcpy(&magic, c->in.data(), 4);
      std::memcpy(&len, c->in.data() + 4 + wire::kKeyBytes, 4);
      if (magic != wire::kHelloMagic || std::memcmp(c->in.data() + 4, key_, sizeof(key_)) != 0 ||
          len > wire::kMaxHelloBody) {
        LOOM_WARN(INIT, "bootstrap root: refused connection from ", c->from.toString(),
                  ": it did not present this job's key");
        *drop = true;
        return;
      }
      c->authed = true;
    }
    if (c->authed && c->rank < 0 && parseHello(c) && !c->fd.valid()) {
      *drop = true;
      return;
    }
  }
}

void RootService::run() {
  log::setThreadRank(-1);
  while (!done_) {
    if (nranks_ > 0 && arrived_ == nranks_) {
      wire::Writer w;
      for (const auto& h : hellos_) wire::putIdentity(&w, h.id, h.listenAddr);
      for (auto& c : conns_) {
        if (c->rank >= 0) reply(c.get(), Code::kOk, w.buf);
      }
      LOOM_INFO(INIT, "bootstrap root: all ", nranks_, " ranks arrived; table sent");
      return;
    }
    if (deadline_.expired()) {
      if (nranks_ == 0) {
        LOOM_WARN(INIT, "bootstrap root: no rank arrived before the deadline; giving up");
        return;
      }
      failAll(Code::kTimeout, strCat("bootstrap timed out: ranks ", wire::rankList(missing()),
                                     " of ", nranks_, " never arrived"));
      return;
    }
    std::vector<pollfd> pfds;
    pfds.push_back({listen_.get(), POLLIN, 0});
    for (auto& c : conns_) pfds.push_back({c->fd.get(), POLLIN, 0});
    int rc = poll(pfds.data(), pfds.size(), deadline_.pollMs(1000));
    if (rc <= 0) continue;
    for (size_t i = pfds.size(); i-- > 1 && !done_;) {
      if (pfds[i].revents == 0) continue;
      bool drop = false;
      onReadable(conns_[i - 1].get(), &drop);
      if (drop) conns_.erase(conns_.begin() + (i - 1));
    }
    if ((pfds[0].revents & POLLIN) != 0 && !done_) {
      for (;;) {
        auto c = std::make_unique<Pending>();
        if (!net::acceptConn(listen_.get(), Deadline::afterMs(0), nullptr, &c->fd, &c->from).ok()) {
          break;
        }
        conns_.push_back(std::move(c));
      }
    }
  }
}

int hexVal(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string toHex(const uint8_t* p, size_t n) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    s += kDigits[p[i] >> 4];
    s += kDigits[p[i] & 15];
  }
  return s;
}

}  // namespace

Status wire::decodeId(const char* id, UniqueId* out) {
  Reader r(reinterpret_cast<const uint8_t*>(id), kUniqueIdBytes);
  uint32_t magic = 0;
  uint16_t version = 0, family = 0, port = 0;
  uint8_t addr[16];
  uint32_t scope = 0;
  if (!(r.get(&magic) && r.get(&version) && r.get(&family) && r.get(&port) && r.bytes(addr, 16) &&
        r.get(&scope) && r.bytes(out->key, kKeyBytes)) ||
      magic != kIdMagic) {
    return invalidArgument(
        "unique id is not a loom unique id (bad magic); was it made by "
        "loomGetUniqueId and passed unchanged?");
  }
  if (version != kVersion) {
    return invalidArgument("unique id has version ", version, ", this loom speaks ", kVersion);
  }
  out->root = net::SockAddr();
  if (family == AF_INET) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    std::memcpy(&a.sin_addr, addr, 4);
    std::memcpy(&out->root.storage, &a, sizeof(a));
    out->root.len = sizeof(a);
  } else if (family == AF_INET6) {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(port);
    std::memcpy(&a.sin6_addr, addr, 16);
    a.sin6_scope_id = scope;
    std::memcpy(&out->root.storage, &a, sizeof(a));
    out->root.len = sizeof(a);
  } else {
    return invalidArgument("unique id has unknown address family ", family);
  }
  return Status();
}

Status makeUniqueId(char* id) {
  if (id == nullptr) return invalidArgument("uniqueId is NULL");
  net::Interface itf;
  LOOM_CHECK(net::chooseInterface(&itf));
  Fd listen;
  net::SockAddr bound;
  LOOM_CHECK(net::listenOn(itf.addr, 1024, &listen, &bound));
  uint8_t key[wire::kKeyBytes];
  LOOM_CHECK(net::randomBytes(key, sizeof(key)));

  wire::Writer w;
  w.put<uint32_t>(wire::kIdMagic);
  w.put<uint16_t>(wire::kVersion);
  w.put<uint16_t>(static_cast<uint16_t>(bound.family()));
  w.put<uint16_t>(static_cast<uint16_t>(bound.port()));
  uint8_t addr[16] = {0};
  uint32_t scope = 0;
  if (bound.family() == AF_INET) {
    std::memcpy(addr, &reinterpret_cast<const sockaddr_in*>(&bound.storage)->sin_addr, 4);
  } else {
    const auto* a6 = reinterpret_cast<const sockaddr_in6*>(&bound.storage);
    std::memcpy(addr, &a6->sin6_addr, 16);
    scope = a6->sin6_scope_id;
  }
  w.bytes(addr, 16);
  w.put<uint32_t>(scope);
  w.bytes(key, sizeof(key));
  std::memset(id, 0, kUniqueIdBytes);
  std::memcpy(id, w.buf.data(), w.buf.size());

  int64_t lifetime = params::timeoutMs();
  LOOM_INFO(INIT, "bootstrap root listening on ", bound.toString(), " (", itf.name, ")");
  auto service = std::make_shared<RootService>(std::move(listen), key, lifetime);
  std::thread([service] { service->run(); }).detach();
  return Status();
}

std::string idToString(const char* id) {
  return toHex(reinterpret_cast<const uint8_t*>(id), kUniqueIdBytes);
}

Status idFromString(const std::string& text, char* id) {
  std::string t = text;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  size_t start = 0;
  while (start < t.size() && std::isspace(static_cast<unsigned char>(t[start]))) ++start;
  t = t.substr(start);
  if (t.size() != 2 * kUniqueIdBytes) {
    return invalidArgument("unique id string must be ", 2 * kUniqueIdBytes, " hex digits, got ",
                           t.size(), " characters");
  }
  char tmp[kUniqueIdBytes];
  for (size_t i = 0; i < kUniqueIdBytes; ++i) {
    int hi = hexVal(t[2 * i]), lo = hexVal(t[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      return invalidArgument("unique id string has a non-hex character '",
                             t[hi < 0 ? 2 * i : 2 * i + 1], "' at position ",
                             hi < 0 ? 2 * i : 2 * i + 1);
    }
    tmp[i] = static_cast<char>(hi << 4 | lo);
  }
  wire::UniqueId parsed;
  LOOM_CHECK(wire::decodeId(tmp, &parsed));
  std::memcpy(id, tmp, kUniqueIdBytes);
  return Status();
}

std::string idTag(const char* id) {
  wire::UniqueId parsed;
  if (!wire::decodeId(id, &parsed).ok()) {
    return toHex(reinterpret_cast<const uint8_t*>(id) + 30, wire::kKeyBytes);
  }
  return toHex(parsed.key, wire::kKeyBytes);
}

}  // namespace loom::bootstrap
