// The root rendezvous service behind makeUniqueId, and the unique id's text form.
//
// makeUniqueId listens on the chosen interface and starts one detached thread that serves one
// communicator. It accepts connections, refuses (and logs) any that does not present the job key
// within kHelloMs, and reads one hello per rank (rank, nranks, identity, listen address), closing
// each connection once read, so it holds O(1) descriptors whatever nranks is. When all nranks have
// said hello it connects to each rank's listen socket and sends it the next rank's address (the
// ranks then build a ring and allGather their identities), and exits. If the earliest rank
// deadline passes first, it tells every rank that arrived which ranks never did, and exits; with
// no rank at all it exits after LOOM_TIMEOUT_MS.
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

constexpr int64_t kHelloMs = 10000;    // an accepted connection must say hello within this
constexpr int64_t kDeliverMs = 10000;  // connecting + sending to one rank

struct Pending {
  Fd fd;
  net::SockAddr from;
  std::vector<uint8_t> in;
  bool authed = false;
  Deadline deadline = Deadline::afterMs(kHelloMs);
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
  void parseHello(Pending* c);
  bool deliver(const wire::RankHello& h, Code code, const std::vector<uint8_t>& body);
  void deliverText(const wire::RankHello& h, Code code, const std::string& text) {
    (void)deliver(h, code, std::vector<uint8_t>(text.begin(), text.end()));
  }
  void finish();
  void acceptAll();
  std::vector<int> missing() const;

  Fd listen_;
  uint8_t key_[wire::kKeyBytes];
  Deadline deadline_;
  int nranks_ = 0;
  int arrived_ = 0;
  std::vector<std::unique_ptr<Pending>> conns_;
  std::vector<wire::RankHello> hellos_;
};

std::vector<int> RootService::missing() const {
  std::vector<int> out;
  for (int r = 0; r < nranks_; ++r) {
    if (hellos_[r].rank < 0) out.push_back(r);
  }
  return out;
}

// Connects to the rank's listen socket and sends it one root message.
bool RootService::deliver(const wire::RankHello& h, Code code, const std::vector<uint8_t>& body) {
  net::SockAddr addr;
  Deadline dl = Deadline::afterMs(kDeliverMs);
  Fd fd;
  Status s = net::parseAddr(h.listenAddr, &addr);
  if (s.ok()) s = net::connectTo(addr, dl, nullptr, &fd, false);
  if (s.ok()) {
    wire::Writer w;
    w.put<uint32_t>(wire::kRootMagic);
    w.bytes(key_, sizeof(key_));
    w.put<uint32_t>(static_cast<uint32_t>(code));
    w.put<uint32_t>(static_cast<uint32_t>(body.size()));
    w.bytes(body.data(), body.size());
    s = net::sendAll(fd.get(), w.buf.data(), w.buf.size(), dl, nullptr);
  }
  if (!s.ok()) {
    LOOM_WARN(INIT, "bootstrap root: could not answer ", h.id.describe(), " at ", h.listenAddr,
              ": ", s.message());
  }
  return s.ok();
}

void RootService::parseHello(Pending* c) {
  uint32_t len = 0;
  std::memcpy(&len, c->in.data() + 4 + wire::kKeyBytes, 4);
  if (c->in.size() < wire::kHelloPrefix + len) return;
  wire::Reader r(c->in.data() + wire::kHelloPrefix, len);
  wire::RankHello h;
  c->fd.reset();  // read in full: the connection is done
  if (!(r.get(&h.rank) && r.get(&h.nranks) && r.get(&h.timeoutMs) && r.get(&h.elapsedMs) &&
        wire::getIdentity(&r, &h.id, &h.listenAddr) && r.done())) {
    LOOM_WARN(INIT, "bootstrap root: refused a malformed hello from ", c->from.toString());
    return;
  }
  h.id.rank = h.rank;
  std::string why;
  if (h.nranks <= 0 || h.rank < 0 || h.rank >= h.nranks) {
    why = strCat("rank ", h.rank, " outside 0..nranks-1 (nranks ", h.nranks, ")");
  } else if (nranks_ != 0 && h.nranks != nranks_) {
    why = strCat("rank ", h.rank, " says nranks ", h.nranks, " but others said ", nranks_);
  } else if (nranks_ != 0 && hellos_[h.rank].rank >= 0) {
    why = strCat("rank ", h.rank, " joined twice (", hellos_[h.rank].id.describe(), " and ",
                 h.id.describe(), ")");
  }
  if (!why.empty()) {
    LOOM_WARN(INIT, "bootstrap root: refused ", h.id.describe(), ": ", why);
    deliverText(h, Code::kInvalidUsage, strCat("bootstrap root refused this rank: ", why));
    return;
  }
  if (nranks_ == 0) {
    nranks_ = h.nranks;
    hellos_.resize(nranks_);
  }
  if (h.timeoutMs > 0) {
    // The earliest rank deadline, so that ranks hear which ranks are missing before they give up.
    Deadline d = Deadline::afterMs(std::max<int64_t>(0, h.timeoutMs - h.elapsedMs));
    if (arrived_ == 0 || d.endNs() < deadline_.endNs() || deadline_.endNs() < 0) deadline_ = d;
  }
  hellos_[h.rank] = std::move(h);
  ++arrived_;
}

void RootService::onReadable(Pending* c, bool* drop) {
  uint8_t buf[4096];
  for (;;) {
    size_t n = 0;
    Status s = net::tryRecv(c->fd.get(), buf, sizeof(buf), &n);
    if (!s.ok()) {
      LOOM_WARN(INIT, "bootstrap root: refused connection from ", c->from.toString(),
                ": closed before presenting the job key (", c->in.size(), " bytes)");
      *drop = true;
      return;
    }
    if (n == 0) return;
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
    if (c->authed) {
      parseHello(c);
      if (!c->fd.valid()) {
        *drop = true;
        return;
      }
    }
  }
}

void RootService::finish() {
  if (arrived_ == nranks_) {
    for (int r = 0; r < nranks_; ++r) {
      wire::Writer w;
      w.str(hellos_[(r + 1) % nranks_].listenAddr);
      (void)deliver(hellos_[r], Code::kOk, w.buf);
    }
    LOOM_INFO(INIT, "bootstrap root: all ", nranks_, " ranks arrived; answered every rank");
    return;
  }
  if (nranks_ == 0) {
    LOOM_WARN(INIT, "bootstrap root: no rank arrived before the deadline; giving up");
    return;
  }
  std::string msg = strCat("bootstrap timed out: ranks ", wire::rankList(missing()), " of ",
                           nranks_, " never arrived");
  LOOM_WARN(INIT, "bootstrap root: ", msg);
  for (const auto& h : hellos_) {
    if (h.rank >= 0) deliverText(h, Code::kTimeout, msg);
  }
}

void RootService::acceptAll() {
  for (;;) {
    auto c = std::make_unique<Pending>();
    Status s = net::acceptConn(listen_.get(), Deadline::afterMs(0), nullptr, &c->fd, &c->from);
    if (!s.ok()) {
      if (s.code() != Code::kTimeout) {
        LOOM_WARN(INIT, "bootstrap root: ", s.message());
        poll(nullptr, 0, 10);  // e.g. out of descriptors: do not spin
      }
      return;
    }
    conns_.push_back(std::move(c));
  }
}

void RootService::run() {
  log::setThreadRank(-1);
  while (!(nranks_ > 0 && arrived_ == nranks_) && !deadline_.expired()) {
    std::vector<pollfd> pfds;
    pfds.push_back({listen_.get(), POLLIN, 0});
    for (auto& c : conns_) pfds.push_back({c->fd.get(), POLLIN, 0});
    int rc = poll(pfds.data(), pfds.size(), deadline_.pollMs(1000));
    for (size_t i = pfds.size(); i-- > 1;) {
      Pending* c = conns_[i - 1].get();
      bool drop = false;
      if (rc > 0 && pfds[i].revents != 0) onReadable(c, &drop);
      if (!drop && c->deadline.expired()) {
        LOOM_WARN(INIT, "bootstrap root: refused connection from ", c->from.toString(),
                  ": no job key within ", kHelloMs, " ms");
        drop = true;
      }
      if (drop) conns_.erase(conns_.begin() + (i - 1));
    }
    if (rc > 0 && (pfds[0].revents & POLLIN) != 0) acceptAll();
  }
  listen_.reset();
  conns_.clear();
  finish();
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
