// Memory registration cache (see reg_cache.h).
#include "transports/ucx/reg_cache.h"

#include <unistd.h>

#include "core/log.h"

namespace loom::transport::ucx {
namespace {

uintptr_t pageSize() {
  static const uintptr_t kPage = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return kPage;
}

}  // namespace

RegCache::RegCache(ucp_context_h ctx, size_t maxEntries, uint64_t minBytes)
    : ctx_(ctx), maxEntries_(maxEntries), minBytes_(minBytes) {
  if (maxEntries_ == 0) return;
  ucs_status_t st = ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 1000, &RegCache::onUnmap, this);
  if (st != UCS_OK) {
    LOOM_INFO(NET, "ucx: no memory-unmap events (", ucs_status_string(st),
              "); loom's registration cache is off, UCX registers buffers itself");
    return;
  }
  hooked_ = true;
  stats_.enabled = true;
}

RegCache::~RegCache() {
  if (hooked_) ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, &RegCache::onUnmap, this);
  for (auto& e : entries_) ucp_mem_unmap(ctx_, e.memh);
}

void RegCache::onUnmap(ucm_event_type_t type, ucm_event_t* ev, void* arg) {
  auto* self = static_cast<RegCache*>(arg);
  auto begin = reinterpret_cast<uintptr_t>(ev->vm_unmapped.address);
  uintptr_t end = begin + ev->vm_unmapped.size;
  std::lock_guard<std::mutex> g(self->mu_);
  if (self->npending_ < self->pending_.size())
    self->pending_[self->npending_++] = {begin, end};
  else
    self->overflow_ = true;
}

void RegCache::drop(std::list<Entry>::iterator it) {
  ucp_mem_unmap(ctx_, it->memh);
  entries_.erase(it);
  stats_.entries = entries_.size();
}

void RegCache::drainUnmapped() {
  std::array<std::pair<uintptr_t, uintptr_t>, 64> got;
  size_t n;
  bool all;
  {
    std::lock_guard<std::mutex> g(mu_);
    n = npending_;
    all = overflow_;
    for (size_t i = 0; i < n; ++i) got[i] = pending_[i];
    npending_ = 0;
    overflow_ = false;
  }
  if (n == 0 && !all) return;
  for (auto it = entries_.begin(); it != entries_.end();) {
    bool hit = all;
    for (size_t i = 0; i < n && !hit; ++i)
      hit = got[i].first < it->end && it->begin < got[i].second;
    auto next = std::next(it);
    if (hit && !it->stale) {
      it->stale = true;
      ++stats_.invalidated;
    }
    if (it->stale && it->inUse == 0) drop(it);
    it = next;
  }
}

bool RegCache::evictOne() {
  auto victim = entries_.end();
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->inUse == 0 && (victim == entries_.end() || it->lastUse < victim->lastUse)) victim = it;
  if (victim == entries_.end()) return false;
  drop(victim);
  ++stats_.evictions;
  return true;
}

RegCache::Entry* RegCache::acquire(const void* p, uint64_t len) {
  if (!hooked_ || p == nullptr || len < minBytes_ || len == 0) return nullptr;
  drainUnmapped();
  const auto a = reinterpret_cast<uintptr_t>(p);
  for (auto& e : entries_) {
    if (!e.stale && e.begin <= a && a + len <= e.end) {
      ++e.inUse;
      e.lastUse = ++clock_;
      ++stats_.hits;
      return &e;
    }
  }
  ++stats_.misses;
  if (entries_.size() >= maxEntries_ && !evictOne()) return nullptr;
  const uintptr_t page = pageSize();
  Entry e;
  e.begin = a & ~(page - 1);
  e.end = (a + len + page - 1) & ~(page - 1);
  ucp_mem_map_params_t mp{};
  mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
  mp.address = reinterpret_cast<void*>(e.begin);
  mp.length = e.end - e.begin;
  ucs_status_t st = ucp_mem_map(ctx_, &mp, &e.memh);
  if (st != UCS_OK) {
    LOOM_INFO(NET, "ucx: ucp_mem_map of ", mp.length, " bytes failed (", ucs_status_string(st),
              "); UCX registers that buffer itself");
    return nullptr;
  }
  e.inUse = 1;
  e.lastUse = ++clock_;
  entries_.push_back(e);
  stats_.entries = entries_.size();
  return &entries_.back();
}

void RegCache::release(Entry* e) {
  if (e == nullptr) return;
  --e->inUse;
  if (e->inUse > 0 || !e->stale) return;
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (&*it == e) {
      drop(it);
      return;
    }
  }
}

}  // namespace loom::transport::ucx
