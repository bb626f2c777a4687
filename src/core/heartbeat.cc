// Monitor: the heartbeat thread, its datagrams, and failure declaration (heartbeat.h).
//
// Datagram (little-endian): u32 magic "LMHB", u32 flags (kRevoked, kAgreeing, kBye), u64 key,
// i32 from, i32 nranks, then nranks bytes: 0 member, 1 failed, 2 left (destroyed its
// communicator), as the sender sees them. One datagram per peer per interval.
#include "core/heartbeat.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "core/log.h"
#include "core/params.h"

namespace loom::health {

namespace {
constexpr uint32_t kMagic = 0x42484d4c;  // "LMHB"
constexpr uint32_t kRevoked = 1, kAgreeing = 2, kBye = 4;
constexpr size_t kHeader = 4 + 4 + 8 + 4 + 4;
constexpr int64_t kFastPeriodMs = 10;

int64_t nowMs() { return net::nowNs() / 1000000; }
}  // namespace

struct Monitor::Datagram {
  uint32_t flags = 0;
  int32_t from = -1;
};

int64_t heartbeatIntervalMs() { return std::max<int64_t>(0, params::heartbeatMs()); }
int64_t heartbeatSilenceMs() {
  return std::max<int64_t>(params::heartbeatTimeoutMs(), 2 * heartbeatIntervalMs());
}

Status Monitor::create(const MonitorArgs& args, std::unique_ptr<Monitor>* out) {
  if (args.revokedFlag == nullptr) return invalidArgument("heartbeat: revokedFlag is NULL");
  std::unique_ptr<Monitor> m(new Monitor(args));
  const int n = args.nranks, me = args.rank;
  net::SockAddr bind;
  LOOM_CHECK(net::parseHost(args.ids[me].address, 0, &bind));
  int fd = socket(bind.family(), SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return errnoStatus("heartbeat: socket", errno);
  m->sock_.reset(fd);
  if (::bind(fd, bind.raw(), bind.len) != 0)
    return errnoStatus(strCat("heartbeat: bind to ", bind.host()), errno);
  net::SockAddr bound;
  LOOM_CHECK(net::localAddr(fd, &bound));
  std::vector<int32_t> ports(n, 0);
  ports[me] = bound.port();
  LOOM_CHECK(args.allGather(ports.data(), sizeof(int32_t)));
  m->addrs_.resize(n);
  for (int q = 0; q < n; ++q)
    if (q != me) LOOM_CHECK(net::parseHost(args.ids[q].address, ports[q], &m->addrs_[q]));
  int p[2];
  if (pipe2(p, O_NONBLOCK | O_CLOEXEC) != 0) return errnoStatus("heartbeat: pipe", errno);
  m->wakeRead_.reset(p[0]);
  m->wakeWrite_.reset(p[1]);
  m->failed_.assign(n, 0);
  m->left_.assign(n, 0);
  m->why_.assign(n, "");
  m->lastSeenMs_.assign(n, nowMs());
  m->peerView_.assign(n, std::vector<uint8_t>(n, 0));
  m->peerAgreeing_.assign(n, 0);
  Monitor* raw = m.get();
  m->thread_ = std::thread([raw] { raw->run(); });
  *out = std::move(m);
  return Status();
}

Monitor::~Monitor() {
  sendAll(kBye);
  stop_ = true;
  char b = 1;
  if (write(wakeWrite_.get(), &b, 1) < 0) {
    // The thread wakes at its next interval anyway.
  }
  if (thread_.joinable()) thread_.join();
}

std::vector<uint8_t> Monitor::viewLocked() const {
  std::vector<uint8_t> v(a_.nranks, 0);
  for (int q = 0; q < a_.nranks; ++q) v[q] = failed_[q] ? 1 : left_[q] ? 2 : 0;
  return v;
}

void Monitor::sendAll(uint32_t flags, bool toFailed) {
  std::vector<uint8_t> buf(kHeader + a_.nranks);
  std::vector<uint8_t> v;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (revoked_) flags |= kRevoked;
    if (agreeing_) flags |= kAgreeing;
    v = viewLocked();
    std::memcpy(buf.data() + kHeader, v.data(), v.size());
  }
  const int32_t from = a_.rank, n = a_.nranks;
  std::memcpy(buf.data(), &kMagic, 4);
  std::memcpy(buf.data() + 4, &flags, 4);
  std::memcpy(buf.data() + 8, &a_.key, 8);
  std::memcpy(buf.data() + 16, &from, 4);
  std::memcpy(buf.data() + 20, &n, 4);
  for (int q = 0; q < n; ++q) {
    if (q == a_.rank || (v[q] != 0 && !toFailed)) continue;
    // Lost or refused datagrams are what the silence bound is for.
    (void)sendto(sock_.get(), buf.data(), buf.size(), MSG_DONTWAIT, addrs_[q].raw(), addrs_[q].len);
  }
}

void Monitor::receive(int64_t now) {
  std::vector<uint8_t> buf(kHeader + a_.nranks + 16);
  for (;;) {
    ssize_t k = recv(sock_.get(), buf.data(), buf.size(), MSG_DONTWAIT);
    if (k < 0) return;
    if (static_cast<size_t>(k) != kHeader + a_.nranks) continue;
    uint32_t magic = 0;
    uint64_t key = 0;
    int32_t n = 0;
    Datagram d;
    std::memcpy(&magic, buf.data(), 4);
    std::memcpy(&d.flags, buf.data() + 4, 4);
    std::memcpy(&key, buf.data() + 8, 8);
    std::memcpy(&d.from, buf.data() + 16, 4);
    std::memcpy(&n, buf.data() + 20, 4);
    if (magic != kMagic || key != a_.key || n != a_.nranks || d.from < 0 || d.from >= n ||
        d.from == a_.rank)
      continue;
    std::vector<uint8_t> set(buf.begin() + kHeader, buf.begin() + kHeader + n);
    onDatagram(d, set, now);
  }
}

void Monitor::onDatagram(const Datagram& d, const std::vector<uint8_t>& set, int64_t now) {
  const int q = d.from;
  bool revokedNow = false;
  {
    std::lock_guard<std::mutex> g(mu_);
    lastSeenMs_[q] = now;
    // Once out, this rank's view is the one that excluded it: later news (peers leaving) is not.
    if (excluded_ || failed_[q] || left_[q]) return;  // a rank we hold out learns from our views
    if (set[a_.rank] == 1 && !excluded_) {
      excluded_ = true;
      excludedBy_ = a_.ids[q].describe();
      LOOM_WARN(NET, "rank ", a_.rank, ": ", excludedBy_,
                " holds this rank failed (it missed heartbeats: stopped, hung or cut off?); "
                "this rank is out of the communicator");
      revokedNow = revokeLocked(strCat("this rank was excluded by ", excludedBy_));
    }
    if (d.flags & kBye) {
      left_[q] = 1;
      LOOM_INFO(NET, "rank ", a_.rank, ": ", a_.ids[q].describe(), " destroyed its communicator");
      cv_.notify_all();
    } else {
      std::vector<uint8_t>& pv = peerView_[q];
      for (int r = 0; r < a_.nranks; ++r) pv[r] = set[r] != 0;
      peerAgreeing_[q] = (d.flags & kAgreeing) != 0;
    }
    for (int r = 0; r < a_.nranks; ++r) {
      if (r == a_.rank || set[r] == 0 || failed_[r] || left_[r]) continue;
      if (set[r] == 2) {
        left_[r] = 1;
        continue;
      }
      revokedNow =
          markFailedLocked(r, strCat("reported failed by ", a_.ids[q].describe())) || revokedNow;
    }
    if ((d.flags & kRevoked) != 0 && (d.flags & kBye) == 0)
      revokedNow = revokeLocked(strCat("revoked by ", a_.ids[q].describe())) || revokedNow;
    cv_.notify_all();
  }
  if (revokedNow) afterRevoke();
}

void Monitor::checkSilence(int64_t now) {
  bool revokedNow = false;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (excluded_ || a_.intervalMs <= 0) return;
    int live = 0, quietNow = 0;
    for (int q = 0; q < a_.nranks; ++q) {
      if (q == a_.rank || failed_[q] || left_[q]) continue;
      ++live;
      quietNow += now - lastSeenMs_[q] > a_.silenceMs;
    }
    // This rank stalled (stopped, starved) and since then has heard from nobody: the others went
    // on without it and left, or it is cut off. Blaming all of them would be wrong.
    if (quietNow > 0 && quietNow == live && stalledAtMs_ >= 0 &&
        now - stalledAtMs_ <= 2 * a_.silenceMs + a_.intervalMs) {
      excluded_ = true;
      excludedBy_ = strCat("itself: it stalled and then heard from none of its ", live, " peers");
      LOOM_WARN(NET, "rank ", a_.rank,
                ": this rank stalled and then heard from none of its peers;"
                " it takes itself to be out of the communicator");
      revokedNow = revokeLocked(strCat("this rank lost contact with every peer after a stall"));
      live = 0;
    }
    for (int q = 0; q < a_.nranks && live > 0; ++q) {
      if (q == a_.rank || failed_[q] || left_[q]) continue;
      const int64_t quiet = now - lastSeenMs_[q];
      if (quiet <= a_.silenceMs) continue;
      revokedNow = markFailedLocked(q, strCat("no heartbeat for ", quiet,
                                              " ms (killed, stopped or hung, or its host is "
                                              "unreachable)")) ||
                   revokedNow;
    }
  }
  if (revokedNow) afterRevoke();
}

bool Monitor::markFailedLocked(int rank, const std::string& why) {
  if (failed_[rank] || excluded_) return false;  // an excluded rank blames nobody
  failed_[rank] = 1;
  why_[rank] = why;
  if (why.rfind("reported", 0) == 0)  // second-hand: the rank that saw it warned already
    LOOM_INFO(NET, "rank ", a_.rank, ": ", a_.ids[rank].describe(), " failed: ", why);
  else
    LOOM_WARN(NET, "rank ", a_.rank, ": ", a_.ids[rank].describe(), " failed: ", why);
  cv_.notify_all();
  return revokeLocked(strCat(a_.ids[rank].describe(), " failed"));
}

bool Monitor::revokeLocked(const std::string& why) {
  if (revoked_) return false;
  revokeWhy_ = why;
  revoked_ = true;
  cv_.notify_all();
  return true;
}

void Monitor::afterRevoke() {
  if (a_.onRevoke) a_.onRevoke();
  sendAll(0);
}

void Monitor::revoke(const std::string& why) {
  bool now;
  {
    std::lock_guard<std::mutex> g(mu_);
    now = revokeLocked(why);
  }
  if (now) afterRevoke();
}

void Monitor::declareFailed(int rank, const std::string& why) {
  if (rank < 0 || rank >= a_.nranks || rank == a_.rank) return;
  bool now;
  {
    std::lock_guard<std::mutex> g(mu_);
    now = markFailedLocked(rank, why);
  }
  if (now) afterRevoke();
  sendAll(0);
}

void Monitor::drain() { receive(nowMs()); }

void Monitor::run() {
  int64_t last = nowMs(), nextSend = last, lastFull = 0;
  while (!stop_.load()) {
    const int64_t now = nowMs();
    // This thread did not run for a while: this process was stopped or starved, so the silence
    // of the peers says nothing about them. Give them a fresh grace period.
    const bool stalled = now - last > std::max<int64_t>(3 * a_.intervalMs, a_.silenceMs / 2);
    last = now;
    receive(now);
    bool fast;
    {
      std::lock_guard<std::mutex> g(mu_);
      if (stalled) {
        std::fill(lastSeenMs_.begin(), lastSeenMs_.end(), now);
        stalledAtMs_ = now;
      }
      fast = now < fastUntilMs_;
    }
    if (now >= nextSend) {
      // Ranks held failed hear from us once an interval, not at the agreement's fast rate (a
      // stopped one would find its socket buffer full of it).
      const bool full = now - lastFull >= std::max<int64_t>(a_.intervalMs, 50);
      if ((fast || a_.intervalMs > 0 || nextSend == 0)) sendAll(0, full);
      if (full) lastFull = now;
      nextSend = now + (fast ? kFastPeriodMs : a_.intervalMs > 0 ? a_.intervalMs : 50);
    }
    checkSilence(now);
    pollfd fds[2] = {{sock_.get(), POLLIN, 0}, {wakeRead_.get(), POLLIN, 0}};
    const int64_t sleepMs = std::max<int64_t>(1, nextSend - nowMs());
    (void)poll(fds, 2, static_cast<int>(sleepMs));
    if (fds[1].revents & POLLIN) {
      char b[16];
      while (read(wakeRead_.get(), b, sizeof(b)) > 0) {
      }
      nextSend = 0;  // someone asked for a send now
    }
  }
}

}  // namespace loom::health
