// Internal to the bootstrap (bootstrap.cc, bootstrap_root.cc): the unique id layout and the wire
// format of rendezvous and peer messages. Little-endian host order (all supported hosts are).
//
// Unique id (kUniqueIdBytes): "LMID" u16 version, u16 family, u16 port, 16 address bytes,
//   u32 IPv6 scope, 16 job-key bytes, zero padding.
// Rank -> root (one connection, closed by the root once read): "LMBH", key[16], u32 body length,
//   body = RankHello.
// Root -> rank (the root connects to the rank's listen socket): "LMBR", key[16], u32 code (0 ok,
//   else a loom::Code), u32 length, body = the next rank's listen address or the error text.
// Rank -> rank (once per connection): "LMBP", key[16], i32 from, i32 to; then frames
//   i32 tag, u64 bytes, payload.
// After the rendezvous the ranks allGather identities in fixed kIdentitySlot-byte records, so the
// root sends O(1) bytes per rank and holds O(1) descriptors at a time, whatever nranks is.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/identity.h"
#include "core/socket.h"
#include "core/status.h"

namespace loom::bootstrap::wire {

constexpr uint32_t kIdMagic = 0x44494d4c;     // "LMID"
constexpr uint32_t kHelloMagic = 0x48424d4c;  // "LMBH"
constexpr uint32_t kPeerMagic = 0x50424d4c;   // "LMBP"
constexpr uint32_t kRootMagic = 0x52424d4c;   // "LMBR"
constexpr size_t kRootHeader = 4 + 16 + 4 + 4;
constexpr size_t kIdentitySlot = 1024;
constexpr uint16_t kVersion = 1;
constexpr size_t kKeyBytes = 16;
constexpr size_t kHelloPrefix = 4 + kKeyBytes + 4;
constexpr size_t kPeerHelloBytes = 4 + kKeyBytes + 4 + 4;
constexpr size_t kFrameHeader = 4 + 8;
constexpr uint32_t kMaxHelloBody = 1 << 16;

struct UniqueId {
  net::SockAddr root;
  uint8_t key[kKeyBytes] = {0};
};

class Writer {
 public:
  template <typename T>
  void put(T v) {
    size_t at = buf.size();
    buf.resize(at + sizeof(T));
    std::memcpy(buf.data() + at, &v, sizeof(T));
  }
  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    buf.insert(buf.end(), b, b + n);
  }
  void str(const std::string& s) {
    put<uint32_t>(static_cast<uint32_t>(s.size()));
    bytes(s.data(), s.size());
  }
  std::vector<uint8_t> buf;
};

class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  template <typename T>
  bool get(T* v) {
    if (n_ - at_ < sizeof(T)) return false;
    std::memcpy(v, p_ + at_, sizeof(T));
    at_ += sizeof(T);
    return true;
  }
  bool bytes(void* out, size_t n) {
    if (n_ - at_ < n) return false;
    std::memcpy(out, p_ + at_, n);
    at_ += n;
    return true;
  }
  bool str(std::string* s) {
    uint32_t len = 0;
    if (!get(&len) || n_ - at_ < len) return false;
    s->assign(reinterpret_cast<const char*>(p_ + at_), len);
    at_ += len;
    return true;
  }
  bool done() const { return at_ == n_; }

 private:
  const uint8_t* p_;
  size_t n_;
  size_t at_ = 0;
};

// One rank's entry in the rendezvous: identity plus its bootstrap listen address.
struct RankHello {
  int32_t rank = -1;
  int32_t nranks = 0;
  int64_t timeoutMs = 0;
  int64_t elapsedMs = 0;  // time the rank had already spent in create() when it sent this
  PeerIdentity id;
  std::string listenAddr;
};

inline void putIdentity(Writer* w, const PeerIdentity& id, const std::string& listenAddr) {
  w->put<int32_t>(id.rank);
  w->put<int32_t>(id.pid);
  w->str(id.hostname);
  w->str(id.bootId);
  w->put<uint64_t>(id.pidNamespace);
  w->str(id.address);
  w->str(listenAddr);
  w->str(id.cpuMask);
}

inline bool getIdentity(Reader* r, PeerIdentity* id, std::string* listenAddr) {
  int32_t rank = 0, pid = 0;
  bool ok = r->get(&rank) && r->get(&pid) && r->str(&id->hostname) && r->str(&id->bootId) &&
            r->get(&id->pidNamespace) && r->str(&id->address) && r->str(listenAddr) &&
            r->str(&id->cpuMask);
  id->rank = rank;
  id->pid = pid;
  return ok;
}

// "0-2, 4, 6-7"
inline std::string rankList(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += j == i ? std::to_string(ranks[i]) : strCat(ranks[i], "-", ranks[j]);
    i = j + 1;
  }
  return out;
}

Status decodeId(const char* id, UniqueId* out);

}  // namespace loom::bootstrap::wire
