// Memory registration cache of the UCX transport: ucp_mem_map handles for the user buffers loom
// sends from and receives into, kept across calls so a buffer reused by every iteration of a
// training loop is registered once.
//
// Bounded: at most maxEntries registrations; when full, the least recently used one that no
// operation holds is unmapped (an operation holds its entry from post to completion). A request
// smaller than minBytes is not registered here at all (UCX's eager path copies it anyway).
//
// Invalidation: a registration names pages, not an allocation. When memory is unmapped (munmap,
// free of a large block, brk shrinking) and mapped again at the same address, a cached handle
// would describe the old pages. The cache subscribes to UCX's memory events
// (ucm_set_event_handler, UCM_EVENT_VM_UNMAPPED): the hook, which may run in any thread, records
// the unmapped range in a fixed array under a mutex (nothing allocates while it is held, so a free
// inside the hook cannot deadlock); before every lookup the owner marks entries overlapping a
// recorded range stale, so they are never returned again and are unmapped as soon as no operation
// holds them. If the array overflows, every entry is treated as stale. Where UCX cannot install its
// memory hooks (UCX_MEM_EVENTS=no), the cache stays off and UCX registers on its own.
#pragma once

#include <ucm/api/ucm.h>
#include <ucp/api/ucp.h>

#include <array>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>

#include "core/status.h"

namespace loom::transport::ucx {

class RegCache {
 public:
  struct Entry {
    uintptr_t begin = 0, end = 0;  // page-aligned range registered
    ucp_mem_h memh = nullptr;
    int inUse = 0;
    bool stale = false;
    uint64_t lastUse = 0;
  };
  struct Stats {
    uint64_t hits = 0, misses = 0, evictions = 0, invalidated = 0;
    size_t entries = 0;
    bool enabled = false;
  };
  // maxEntries 0 turns the cache off (acquire always returns nullptr).
  RegCache(ucp_context_h ctx, size_t maxEntries, uint64_t minBytes);
  ~RegCache();
  RegCache(const RegCache&) = delete;
  RegCache& operator=(const RegCache&) = delete;

  // A registration covering [p, p + len), held until release(); nullptr when the cache is off,
  // len < minBytes, or mapping failed (then UCX registers the buffer itself, as without a cache).
  Entry* acquire(const void* p, uint64_t len);
  void release(Entry* e);
  const Stats& stats() const { return stats_; }

 private:
  static void onUnmap(ucm_event_type_t type, ucm_event_t* ev, void* arg);
  void drainUnmapped();
  void drop(std::list<Entry>::iterator it);
  bool evictOne();

  ucp_context_h ctx_;
  size_t maxEntries_;
  uint64_t minBytes_;
  bool hooked_ = false;
  uint64_t clock_ = 0;
  std::list<Entry> entries_;  // list: Entry addresses stay valid while held
  Stats stats_;
  // Written by the memory hook (any thread), read by drainUnmapped().
  std::mutex mu_;
  std::array<std::pair<uintptr_t, uintptr_t>, 64> pending_{};
  size_t npending_ = 0;
  bool overflow_ = false;
};

}  // namespace loom::transport::ucx
