// Max-min fair rates of the active flows (weighted progressive filling). A flow crosses links
// with weights (1 on a single path, fractions when sprayed); at rate r it uses r * w of a link.
// Repeatedly, the link with the smallest fair share (capacity left / weight of unfrozen flows)
// fixes the rate of its unfrozen flows at that share. recompute() only revisits the connected
// component of the links touched since the last call, unless asked for a global pass.
//
// Slack links: every flow has a cap, the rate it would get alone (min over its links of capacity /
// weight). A link whose flows' caps cannot fill it (sum of weight * cap <= capacity) never
// constrains anyone, so it neither joins components nor enters the filling; this is exact and
// keeps flows that only share non-blocking spines (sprayed, or a 1:1 fat-tree) independent.
//
// Bounded links: the demand test fails when flows pile up behind one NIC (k flows of cap c each
// claim k * c of every spine they are sprayed over, though together they get at most c). So each
// path also gets a source: its hop with the smallest capacity / weight; the flows of all paths
// with source s load s at most its capacity, so they load another link l at most
// cap(s) * max(w_l / w_s) over those paths. A link that is nobody's source and whose bound (sum
// over sources) is within its capacity never constrains either. Exact (the sources themselves
// are always solved or demand-slack); on a 1:1 fat-tree it keeps piled-up flows from coupling the
// whole fabric through the spines. Bounds are kept per (source, link) for up to
// kMaxBoundEntries pairs, then turned off (every link is solved again).
//
// Local solves: the touched component can still be the whole fabric (a pipelined tree couples
// every NIC through flows that share them), though a flow that starts or ends mostly changes the
// rates of a few flows near it. So recompute() first solves only the seeds (new flows, flows on
// touched links that can constrain), every other flow keeping its rate and its load taken off the
// capacities, then checks the result: an allocation is max-min fair iff every flow runs at its
// cap or has a bottleneck, a full link on which no flow runs faster. Only flows of the seeds and
// flows on the seeds' links can have lost theirs; any that did joins the seeds with the flows
// sharing its links, and the solve repeats (after kLocalRounds, the whole component). Checks
// allow a relative kTol for rounding, so rates equal the component solve's up to rounding.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "sim/huge_pages.h"
#include "sim/net.h"
#include "sim/routing.h"

namespace loom::sim {

// Min-heap with four children per node (a node's children share a cache line for 16-byte
// entries: half the depth of a binary heap, fewer misses per pop on large heaps).
template <typename T>
class QuadHeap {
 public:
  bool empty() const { return v_.empty(); }
  size_t size() const { return v_.size(); }
  const T& top() const { return v_.front(); }
  void push(const T& x) {
    size_t i = v_.size();
    v_.push_back(x);
    while (i > 0) {
      size_t parent = (i - 1) / 4;
      if (!(v_[parent] > x)) break;
      v_[i] = v_[parent];
      i = parent;
    }
    v_[i] = x;
  }
  void pop() {
    const T x = v_.back();
    v_.pop_back();
    if (!v_.empty()) siftDown(x);
  }
  // pop() then push(x), in one pass.
  void replaceTop(const T& x) { siftDown(x); }

 private:
  void siftDown(const T& x) {
    const size_t n = v_.size();
    size_t i = 0;
    for (;;) {
      size_t c = 4 * i + 1;
      if (c >= n) break;
      size_t best = c;
      for (size_t k = c + 1; k < std::min(c + 4, n); ++k)
        if (v_[best] > v_[k]) best = k;
      if (!(x > v_[best])) break;
      v_[i] = v_[best];
      i = best;
    }
    v_[i] = x;
  }

  std::vector<T> v_;
};

// Monotone priority queue of entries with a non-negative double `t` (a radix heap): no key is
// pushed below the last one popped (one that is counts as equal to it) until it is empty. Entries
// sit in 65 buckets by the highest bit in which their key differs from the last popped key; popping
// from an empty bucket 0 first moves the first non-empty bucket's entries down relative to its
// minimum (the key popped): a few moves per entry instead of a heap's log n levels. The minimum is
// known without moving anything (top() is const): bucket 0's entries, or the first non-empty
// bucket's smallest, kept up to date as entries come. Entries with equal keys pop in no particular
// order.
template <typename T>
class RadixHeap {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  const T& top() const { return b_[0].empty() ? b_[minB_][minAt_] : b_[0].back(); }
  void push(const T& x) {
    const uint64_t k = std::max(key(x.t), last_);
    const int i = bucketOf(k);
    b_[i].push_back(x);
    ++size_;
    if (i > 0 && (size_ == 1 || i < minB_ || (i == minB_ && k < minKey_))) {
      minB_ = i;
      minAt_ = b_[i].size() - 1;
      minKey_ = k;
    }
  }
  void pop() {            // the entry top() returned
    if (b_[0].empty()) {  // it leaves its bucket, the rest moves down relative to its key
      std::vector<T>& v = b_[minB_];
      v[minAt_] = v.back();
      v.pop_back();
      last_ = minKey_;
      for (const T& x : v) b_[bucketOf(std::max(key(x.t), last_))].push_back(x);
      v.clear();
    } else {
      b_[0].pop_back();
    }
    if (--size_ == 0) {
      last_ = 0;  // empty: the next keys may start lower (a new solve)
    } else if (b_[0].empty()) {
      findMin();
    }
  }

 private:
  static uint64_t key(double t) {  // order-preserving for t >= 0
    uint64_t u;
    std::memcpy(&u, &t, sizeof(u));
    return u;
  }
  int bucketOf(uint64_t k) const { return k == last_ ? 0 : 64 - __builtin_clzll(k ^ last_); }
  void findMin() {
    minB_ = 1;
    while (b_[minB_].empty()) ++minB_;
    const std::vector<T>& v = b_[minB_];
    minKey_ = ~uint64_t{0};
    for (size_t j = 0; j < v.size(); ++j) {
      const uint64_t k = std::max(key(v[j].t), last_);
      if (k < minKey_) {
        minKey_ = k;
        minAt_ = j;
      }
    }
  }
  std::vector<T> b_[65];
  uint64_t last_ = 0, minKey_ = 0;
  int minB_ = 0;
  size_t minAt_ = 0, size_ = 0;
};

class MaxMin {
 public:
  // capacity[l]: bytes/s of link l (links of the Net, or link classes of a folded run).
  MaxMin(const std::vector<double>* capacity, const std::vector<PathHop>* pool);

  // The flow crosses (*pool)[off, off + len) (the pool may grow, entries must not change).
  uint32_t addFlow(uint32_t off, uint32_t len, double bytes, double now);
  void removeFlow(uint32_t f, double now);  // also a parked flow
  // A parked flow carries nothing (its connection waits for its next message) but stays on its
  // links' lists, so the next message on the same path restarts it without registering it again.
  void park(uint32_t f);
  void unpark(uint32_t f, double bytes, double now);
  // The flow carries `bytes` more from now at its current rate (the next message of its
  // connection: same path, so no rate changes); returns its new finish time (kInf: stalled).
  double refill(uint32_t f, double bytes, double now);
  double rate(uint32_t f) const { return flows_[f].rate; }
  // Bumped whenever the flow's finish time changes or it ends (an event carrying an older
  // version is stale); kept apart from the flows, dense, for the engine's check per event.
  uint32_t version(uint32_t f) const { return version_[f]; }
  bool active(uint32_t f) const { return flows_[f].active; }
  const double* linkLoad() const { return load_.data(); }
  // Link l carries an active (not parked) flow.
  bool carries(uint32_t l) const;
  // Sum over link l's active flows of weight x cap (what they would load it with alone).
  double demand(uint32_t l) const { return lk_[l].demand; }
  // Link l's capacity becomes `cap` (bytes/s): its flows' caps follow, the link is touched and
  // the bounds (see the top) are dropped for the rest of the run. Solve globally after it.
  void setCapacity(uint32_t l, double cap);
  size_t activeFlows() const { return active_.size(); }

  // New rates for the changed component(s) (all flows when `global`); for every flow whose rate
  // changed, emit(flow, finishTime, version) is called (finishTime = +inf when stalled).
  template <typename Emit>
  int recompute(double now, bool global, Emit emit) {
    int n;
    if (global || !local_) {
      n = collect(global);
      solve(now, false);
    } else {
      n = solveLocal(now);
    }
    for (uint32_t f : comp_) {
      Flow& fl = flows_[f];
      if (fl.rate == fl.newRate && !fl.fresh) continue;
      fl.rate = fl.newRate;
      fl.fresh = false;
      emit(f, fl.rate > 0 ? now + fl.bytesLeft / fl.rate : kInf, ++version_[f]);
    }
    return n;
  }

  static constexpr double kInf = 1e300;
  // Local solves (see the top) on or off (off: the whole touched component; same rates up to
  // rounding, for tests).
  void setLocal(bool on) { local_ = on; }
  uint64_t fallbacks() const { return fallbacks_; }

 private:
  // One cache line per flow (the solver visits a link's flows at random); its index in active_
  // and its last check round are kept apart (activeIdx_, checked_).
  struct alignas(64) Flow {
    uint32_t off = 0, len = 0;
    double bytesLeft = 0, rate = 0, newRate = 0, lastT = 0, cap = 0;
    uint32_t stamp = 0;
    uint32_t bneck = kAtCap;  // its bottleneck when last solved or checked (kAtCap: its cap)
    bool active = false, fresh = false, frozen = false, parked = false;
  };
  struct Share {
    double t;  // the share (>= 0): progressive filling pops them in increasing order
    uint32_t link, ver;
  };
  bool slack(uint32_t l) const {
    const LinkHot& k = lk_[l];
    return k.demand <= k.cap * (1 + 1e-9) ||
           (bounds_ && !k.isSource && k.bound <= k.cap * (1 + 1e-9));
  }
  void registerPath(uint32_t off, uint32_t len);
  void dropBounds();
  static constexpr size_t kMaxBoundEntries = size_t{1} << 23;
  int collect(bool global);
  uint32_t takeSeeds(bool narrow);  // into comp_, stamped with the returned round stamp
  void grow(uint32_t s);
  void setCap(Flow* fl);
  void activate(uint32_t f, double bytes, double now);  // carries `bytes` from now, to solve
  void deactivate(uint32_t f);                          // off the active list, its events stale
  void pushShares();
  // Progressive filling of comp_ on compLinks_; with `fixed`, flows outside comp_ keep their rates
  // and their load comes off the capacity first.
  void solve(double now, bool fixed);
  int solveLocal(double now);
  bool bottlenecked(uint32_t f, uint32_t s);
  void linkState(uint32_t l, uint32_t s);
  static constexpr double kTol = 1e-11;   // relative: saturated / largest rate (see the top)
  static constexpr int kLocalRounds = 3;  // then the whole component
  void freeze(uint32_t f, double rate, uint32_t stamp, uint32_t bneck);
  static constexpr uint32_t kAtCap = ~0u;
  static constexpr uint32_t kFlowBit = 0x80000000u;
  void touch(int link);

  const PathHop& hop(const Flow& f, uint32_t i) const { return (*pool_)[f.off + i]; }

  const std::vector<double>& cap_;
  const std::vector<PathHop>* pool_;
  std::vector<Flow, HugePageAllocator<Flow>> flows_;
  std::vector<uint32_t> free_, active_, version_, activeIdx_, checked_;
  struct LinkFlow {  // a flow on a link: which hop of its path, with which weight
    uint32_t flow, hop;
    double weight;
  };
  std::vector<std::vector<LinkFlow>> linkFlows_;
  std::vector<std::vector<uint32_t>> pos_;  // per flow per hop: its index in linkFlows_
  // Per link what the seeding and the slack test read together, in one place: its capacity,
  // demand (sum of weight x cap of its flows), bound and stamp (see the top).
  struct LinkHot {
    double cap = 0, demand = 0, bound = 0;
    uint32_t stamp = 0;
    uint8_t isSource = 0;
  };
  std::vector<LinkHot, HugePageAllocator<LinkHot>> lk_;
  std::vector<double> load_, remCap_, wsum_;
  std::vector<uint32_t> linkVer_, dirty_;
  std::vector<uint32_t> comp_, compLinks_, bfs_, toPush_;
  std::vector<uint8_t> pushMark_;
  // Per link: whether it could constrain (not slack) when its flows were last solved. A dirty link
  // that is slack now and was then changes nobody's rate: only its new flows (fresh_) are solved.
  std::vector<uint8_t> wasTight_;
  std::vector<uint32_t> fresh_;
  // Bounded links (see the top): per link the bound and whether it is some path's source; per
  // (source, link) the largest weight ratio; which pool offsets (paths) are registered.
  bool bounds_ = true;
  std::vector<uint8_t> registered_;
  std::unordered_map<uint64_t, double> ratio_;
  uint32_t stamp_ = 1;
  // Local solves: per link its load and largest rate under the new rates (valid when
  // checkStamp_[l] == checkRound_), the flows found not bottlenecked.
  bool local_ = true;
  uint64_t fallbacks_ = 0;
  uint32_t checkRound_ = 0;
  std::vector<uint32_t> checkStamp_, viol_;
  std::vector<double> used_, maxRate_;
  std::vector<double> fixedMax_;  // per solved link: the fastest flow outside the solve on it
  RadixHeap<Share> heap_;         // a level never falls below the one just frozen (up to rounding)
};

}  // namespace loom::sim
