// Host staging of device buffers (see device_staging.h).
#include "api/device_staging.h"

#include <algorithm>
#include <mutex>

#include "core/cuda_driver.h"

namespace loom::api {

namespace {

struct HostBuf {
  uint8_t* p = nullptr;
  size_t bytes = 0;
  bool pinned = false;
};

// Page-locked buffers are slow to allocate (milliseconds), so they are kept for the next call.
// The pool lives until exit and is never freed: the driver may be gone by then.
class Pool {
 public:
  HostBuf take(size_t bytes) {
    {
      std::lock_guard<std::mutex> g(mu_);
      auto best = free_.end();
      for (auto it = free_.begin(); it != free_.end(); ++it)
        if (it->bytes >= bytes && (best == free_.end() || it->bytes < best->bytes)) best = it;
      if (best != free_.end()) {
        HostBuf b = *best;
        free_.erase(best);
        return b;
      }
    }
    HostBuf b;
    b.bytes = std::max<size_t>(kGrain, (bytes + kGrain - 1) / kGrain * kGrain);
    b.p = static_cast<uint8_t*>(cuda::allocHost(b.bytes, &b.pinned));
    if (b.p == nullptr) b.bytes = 0;
    return b;
  }
  void give(HostBuf b) {
    std::lock_guard<std::mutex> g(mu_);
    free_.push_back(b);
    if (free_.size() <= kKeep) return;
    auto smallest = std::min_element(free_.begin(), free_.end(),
                                     [](auto& x, auto& y) { return x.bytes < y.bytes; });
    cuda::freeHost(smallest->p, smallest->pinned);
    free_.erase(smallest);
  }

 private:
  static constexpr size_t kGrain = size_t{1} << 20;
  static constexpr size_t kKeep = 8;
  std::mutex mu_;
  std::vector<HostBuf> free_;
};

Pool& pool() {
  static Pool* p = new Pool;  // intentionally leaked, see Pool
  return *p;
}

// One staged op in flight: its host buffers, and where the results go back to.
struct Staged {
  std::vector<HostBuf> bufs;
  uint8_t* outDev = nullptr;
  const uint8_t* outHost = nullptr;
  uint64_t outBytes = 0;
};

Status copyIn(HostBuf* b, const uint8_t* dev, uint64_t bytes, Staged* s) {
  *b = pool().take(bytes);
  s->bufs.push_back(*b);
  if (b->p == nullptr) return systemError("no host memory for a ", bytes, "-byte staging buffer");
  return cuda::copy(b->p, dev, bytes);
}

// Fills h (a copy of o) with host pointers and copies the device inputs in.
Status stageIn(const OpDesc& o, OpDesc* h, Staged* s) {
  const DeviceStaging& st = *o.staging;
  LOOM_CHECK(cuda::useContext(st.ctx));
  auto* send = static_cast<const uint8_t*>(o.send);
  auto* recv = static_cast<uint8_t*>(o.recv);
  const bool bothDevice = st.sendOnDevice && st.recvOnDevice && st.sendBytes && st.recvBytes;
  if (bothDevice && send < recv + st.recvBytes && recv < send + st.sendBytes) {
    // In place: one buffer over both ranges keeps the offsets the schedule relies on.
    const uint8_t* lo = std::min<const uint8_t*>(send, recv);
    const uint8_t* hi = std::max<const uint8_t*>(send + st.sendBytes, recv + st.recvBytes);
    HostBuf b;
    LOOM_CHECK(copyIn(&b, lo, hi - lo, s));
    h->send = b.p + (send - lo);
    h->recv = b.p + (recv - lo);
  } else {
    HostBuf b;
    if (st.sendOnDevice && st.sendBytes > 0) {
      LOOM_CHECK(copyIn(&b, send, st.sendBytes, s));
      h->send = b.p;
    }
    if (st.recvOnDevice && st.recvBytes > 0) {
      // Results cover recv entirely except for all-to-all-v, whose gaps must keep their bytes.
      if (st.recvHasGaps) {
        LOOM_CHECK(copyIn(&b, recv, st.recvBytes, s));
      } else {
        b = pool().take(st.recvBytes);
        s->bufs.push_back(b);
        if (b.p == nullptr) return systemError("no host memory for staging");
      }
      h->recv = b.p;
    }
  }
  if (st.recvOnDevice) {
    s->outDev = recv;
    s->outHost = static_cast<const uint8_t*>(h->recv);
    s->outBytes = st.recvBytes;
  }
  h->staging = nullptr;
  return Status();
}

}  // namespace

void stageIfDevice(OpDesc* o, uint64_t sendBytes, uint64_t recvBytes) {
  const bool sendDev = sendBytes > 0 && cuda::isDeviceMemory(o->send);
  const bool recvDev = recvBytes > 0 && cuda::isDeviceMemory(o->recv);
  if (!sendDev && !recvDev) return;
  auto st = std::make_shared<DeviceStaging>();
  st->sendOnDevice = sendDev;
  st->recvOnDevice = recvDev;
  st->sendBytes = sendBytes;
  st->recvBytes = recvBytes;
  st->recvHasGaps = o->coll == sched::CollType::kAllToAllv;
  st->ctx = cuda::contextOf(sendDev ? o->send : o->recv);
  o->staging = std::move(st);
}

bool anyStaged(const std::vector<OpDesc>& ops) {
  for (const OpDesc& o : ops)
    if (o.staging) return true;
  return false;
}

Status runStaged(const std::vector<OpDesc>& ops,
                 const std::function<Status(const std::vector<OpDesc>&)>& run) {
  std::vector<OpDesc> host(ops);
  std::vector<Staged> staged(ops.size());
  Status s;
  for (size_t i = 0; i < ops.size() && s.ok(); ++i)
    if (ops[i].staging) s = stageIn(ops[i], &host[i], &staged[i]);
  if (s.ok()) s = run(host);
  for (size_t i = 0; i < ops.size(); ++i) {
    if (s.ok() && staged[i].outDev != nullptr) {
      s = cuda::useContext(ops[i].staging->ctx);
      if (s.ok()) s = cuda::copy(staged[i].outDev, staged[i].outHost, staged[i].outBytes);
    }
    for (const HostBuf& b : staged[i].bufs)
      if (b.p != nullptr) pool().give(b);
  }
  return s;
}

}  // namespace loom::api
