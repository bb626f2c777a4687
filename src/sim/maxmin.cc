#include "sim/maxmin.h"

#include <algorithm>

namespace loom::sim {

MaxMin::MaxMin(const std::vector<double>* capacity, const std::vector<PathHop>* pool)
    : cap_(*capacity),
      pool_(pool),
      linkFlows_(capacity->size()),
      load_(capacity->size(), 0.0),
      remCap_(capacity->size(), 0.0),
      wsum_(capacity->size(), 0.0),
      linkVer_(capacity->size(), 0),
      pushMark_(capacity->size(), 0),
      wasTight_(capacity->size(), 0),
      checkStamp_(capacity->size(), 0),
      used_(capacity->size(), 0.0),
      maxRate_(capacity->size(), 0.0),
      fixedMax_(capacity->size(), 0.0) {
  lk_.resize(capacity->size());
  for (size_t l = 0; l < lk_.size(); ++l) lk_[l].cap = (*capacity)[l];
}

void MaxMin::registerPath(uint32_t off, uint32_t len) {
  if (off >= registered_.size())
    registered_.resize(std::max<size_t>(off + 1, 2 * registered_.size()), 0);
  if (registered_[off] || len == 0) return;
  registered_[off] = 1;
  uint32_t src = 0;  // the hop with the smallest capacity / weight
  for (uint32_t i = 1; i < len; ++i) {
    const PathHop& a = (*pool_)[off + i];
    const PathHop& b = (*pool_)[off + src];
    if (lk_[a.link].cap * b.weight < lk_[b.link].cap * a.weight) src = i;
  }
  const PathHop& s = (*pool_)[off + src];
  lk_[s.link].isSource = 1;
  for (uint32_t i = 0; i < len; ++i) {
    const PathHop& h = (*pool_)[off + i];
    if (h.link == s.link) continue;
    double r = h.weight / s.weight;
    auto [it, fresh] = ratio_.emplace((static_cast<uint64_t>(s.link) << 32) | h.link, r);
    if (!fresh && it->second >= r) continue;
    lk_[h.link].bound += lk_[s.link].cap * (fresh ? r : r - it->second);
    it->second = r;
  }
  if (ratio_.size() > kMaxBoundEntries) dropBounds();
}

void MaxMin::dropBounds() {
  // Links slack only by their bound now constrain again: their flows are re-solved.
  bounds_ = false;
  for (size_t l = 0; l < cap_.size(); ++l)
    if (!linkFlows_[l].empty()) touch(static_cast<int>(l));
  ratio_ = {};
  registered_ = {};
}

void MaxMin::touch(int link) {
  if (lk_[link].stamp == stamp_ + 1) return;  // already dirty in this round
  lk_[link].stamp = stamp_ + 1;
  dirty_.push_back(link);
}

uint32_t MaxMin::addFlow(uint32_t off, uint32_t len, double bytes, double now) {
  uint32_t f;
  if (!free_.empty()) {
    f = free_.back();
    free_.pop_back();
  } else {
    f = static_cast<uint32_t>(flows_.size());
    flows_.emplace_back();
    pos_.emplace_back();
    version_.push_back(0);
    activeIdx_.push_back(0);
    checked_.push_back(0);
  }
  Flow& fl = flows_[f];
  fl = Flow();
  checked_[f] = 0;
  fl.off = off;
  fl.len = len;
  activate(f, bytes, now);
  setCap(&fl);
  if (bounds_) registerPath(off, len);
  pos_[f].resize(len);  // keeps its capacity when the slot is reused: no allocation per flow
  for (uint32_t i = 0; i < len; ++i) {
    const PathHop& h = hop(fl, i);
    pos_[f][i] = static_cast<uint32_t>(linkFlows_[h.link].size());
    linkFlows_[h.link].push_back({f, i, h.weight});
    load_[h.link] += h.weight;
    lk_[h.link].demand += h.weight * fl.cap;
    touch(h.link);
  }
  return f;
}

void MaxMin::setCap(Flow* fl) {
  fl->cap = kInf;
  for (uint32_t i = 0; i < fl->len; ++i) {
    const PathHop& h = hop(*fl, i);
    fl->cap = std::min(fl->cap, lk_[h.link].cap / h.weight);
  }
}

bool MaxMin::carries(uint32_t l) const {
  for (const LinkFlow& e : linkFlows_[l])
    if (flows_[e.flow].active) return true;
  return false;
}

void MaxMin::setCapacity(uint32_t l, double cap) {
  if (bounds_) dropBounds();  // they were summed from the old capacities
  lk_[l].cap = cap;
  for (const LinkFlow& e : linkFlows_[l]) {
    Flow& fl = flows_[e.flow];
    const double w = fl.parked ? 0.0 : 1.0;  // a parked flow adds no demand
    for (uint32_t i = 0; i < fl.len; ++i)
      lk_[hop(fl, i).link].demand -= w * hop(fl, i).weight * fl.cap;
    setCap(&fl);
    for (uint32_t i = 0; i < fl.len; ++i) {
      lk_[hop(fl, i).link].demand += w * hop(fl, i).weight * fl.cap;
      touch(static_cast<int>(hop(fl, i).link));
    }
  }
  touch(static_cast<int>(l));
}

double MaxMin::refill(uint32_t f, double bytes, double now) {
  Flow& fl = flows_[f];
  fl.bytesLeft = bytes;
  fl.lastT = now;
  ++version_[f];
  return fl.rate > 0 ? now + bytes / fl.rate : kInf;
}

void MaxMin::removeFlow(uint32_t f, double now) {
  Flow& fl = flows_[f];
  const bool wasParked = fl.parked;
  for (uint32_t i = 0; i < fl.len; ++i) {
    int l = hop(fl, i).link;
    std::vector<LinkFlow>& v = linkFlows_[l];
    uint32_t at = pos_[f][i];  // swap-remove in O(1)
    v[at] = v.back();
    pos_[v[at].flow][v[at].hop] = at;
    v.pop_back();
    if (!wasParked) {
      load_[l] -= hop(fl, i).weight;
      lk_[l].demand -= hop(fl, i).weight * fl.cap;
      touch(l);
    }
    if (v.empty()) load_[l] = lk_[l].demand = 0;
  }
  fl.parked = false;
  if (!wasParked) deactivate(f);
  free_.push_back(f);
}

void MaxMin::activate(uint32_t f, double bytes, double now) {
  Flow& fl = flows_[f];
  fl.active = true;
  fl.fresh = true;
  fl.bytesLeft = bytes;
  fl.lastT = now;
  activeIdx_[f] = static_cast<uint32_t>(active_.size());
  active_.push_back(f);
  fresh_.push_back(f);
}

void MaxMin::deactivate(uint32_t f) {
  Flow& fl = flows_[f];
  uint32_t idx = activeIdx_[f];
  active_[idx] = active_.back();
  activeIdx_[active_[idx]] = idx;
  active_.pop_back();
  fl.active = false;
  ++version_[f];  // events pushed for it are stale, also once the slot is reused
}

void MaxMin::park(uint32_t f) {
  Flow& fl = flows_[f];
  for (uint32_t i = 0; i < fl.len; ++i) {
    const PathHop& h = hop(fl, i);
    load_[h.link] -= h.weight;
    lk_[h.link].demand -= h.weight * fl.cap;
    touch(h.link);
  }
  deactivate(f);
  // Out of every solve: no rate, frozen, its cap as its bottleneck (never checked), never a seed.
  fl.parked = true;
  fl.fresh = false;
  fl.rate = fl.newRate = 0;
  fl.frozen = true;
  fl.bneck = kAtCap;
}

void MaxMin::unpark(uint32_t f, double bytes, double now) {
  Flow& fl = flows_[f];
  fl.parked = false;
  activate(f, bytes, now);
  for (uint32_t i = 0; i < fl.len; ++i) {
    const PathHop& h = hop(fl, i);
    load_[h.link] += h.weight;
    lk_[h.link].demand += h.weight * fl.cap;
    touch(h.link);
  }
}

uint32_t MaxMin::takeSeeds(bool narrow) {
  // Stamps: stamp_ marks "visited in this round"; dirty links carry stamp_ + 1.
  ++stamp_;
  uint32_t s = ++stamp_;
  comp_.clear();
  compLinks_.clear();
  // New flows, and every flow on a touched link that can constrain now or could when its flows
  // were last solved (`narrow`: only the fastest flows there, the ones it can be the bottleneck
  // of; the local solve's check finds any other flow that changes).
  for (uint32_t f : fresh_) {
    if (!flows_[f].active || flows_[f].stamp == s) continue;
    flows_[f].stamp = s;
    comp_.push_back(f);
  }
  for (uint32_t l : dirty_) {
    bool tight = !slack(l);
    bool was = wasTight_[l];
    wasTight_[l] = tight;
    if (!tight && !was) continue;
    double top = 0;
    if (narrow)
      for (const LinkFlow& e : linkFlows_[l]) top = std::max(top, flows_[e.flow].rate);
    for (const LinkFlow& e : linkFlows_[l]) {
      const uint32_t f = e.flow;
      if (flows_[f].stamp == s || flows_[f].parked || flows_[f].rate < top * (1 - kTol)) continue;
      flows_[f].stamp = s;
      comp_.push_back(f);
    }
  }
  dirty_.clear();
  fresh_.clear();
  return s;
}

void MaxMin::grow(uint32_t s) {
  // Every flow on a link of compLinks_ joins comp_, and every link that can constrain of a flow
  // of comp_ joins compLinks_, until both are closed.
  size_t li = 0, q = 0;
  for (;;) {
    if (li < compLinks_.size()) {
      for (const LinkFlow& e : linkFlows_[compLinks_[li++]]) {
        const uint32_t f2 = e.flow;
        if (flows_[f2].stamp == s || flows_[f2].parked) continue;
        flows_[f2].stamp = s;
        comp_.push_back(f2);
      }
    } else if (q < comp_.size()) {
      const Flow& fl = flows_[comp_[q++]];
      for (uint32_t i = 0; i < fl.len; ++i) {
        uint32_t l = hop(fl, i).link;
        if (lk_[l].stamp == s || slack(l)) continue;
        lk_[l].stamp = s;
        compLinks_.push_back(l);
      }
    } else {
      break;
    }
  }
}

int MaxMin::collect(bool global) {
  if (!global) {
    grow(takeSeeds(false));
    return static_cast<int>(comp_.size());
  }
  ++stamp_;
  uint32_t s = ++stamp_;
  comp_ = active_;
  compLinks_.clear();
  for (uint32_t f : comp_) flows_[f].stamp = s;
  for (uint32_t f : comp_)
    for (uint32_t i = 0; i < flows_[f].len; ++i) {
      int l = hop(flows_[f], i).link;
      if (lk_[l].stamp != s) {
        lk_[l].stamp = s;
        compLinks_.push_back(l);
      }
    }
  for (uint32_t l : dirty_) wasTight_[l] = !slack(l);
  dirty_.clear();
  fresh_.clear();
  return static_cast<int>(comp_.size());
}

void MaxMin::linkState(uint32_t l, uint32_t s) {
  if (checkStamp_[l] == checkRound_) return;
  checkStamp_[l] = checkRound_;
  double used = 0, top = 0;
  for (const LinkFlow& e : linkFlows_[l]) {
    const Flow& g = flows_[e.flow];
    double r = g.stamp == s ? g.newRate : g.rate;
    used += r * e.weight;
    top = std::max(top, r);
  }
  used_[l] = used;
  maxRate_[l] = top;
}

bool MaxMin::bottlenecked(uint32_t f, uint32_t s) {
  // Max-min fair: every flow runs at its cap or has a link that is full and on which no flow
  // runs faster (only links that can constrain; slack ones never fill below the caps).
  // The bottleneck found is kept (Flow::bneck) for the next checks.
  Flow& fl = flows_[f];
  double r = fl.stamp == s ? fl.newRate : fl.rate;
  if (r >= fl.cap * (1 - kTol)) {
    fl.bneck = kAtCap;
    return true;
  }
  for (uint32_t i = 0; i < fl.len; ++i) {
    uint32_t l = hop(fl, i).link;
    if (slack(l)) continue;
    linkState(l, s);
    if (used_[l] >= lk_[l].cap * (1 - kTol) && r >= maxRate_[l] * (1 - kTol)) {
      fl.bneck = l;
      return true;
    }
  }
  return false;
}

int MaxMin::solveLocal(double now) {
  // Solve the seeds alone, the other flows' rates fixed; if the result leaves a flow of the seeds
  // or of their links without a bottleneck, the flows around it join and the solve repeats; after
  // kLocalRounds, the whole component (collect's answer).
  const uint32_t s = takeSeeds(true);
  if (comp_.empty()) return 0;
  int total = 0;
  size_t linked = 0;  // comp_[0, linked) have their links in compLinks_
  for (int round = 0;; ++round) {
    if (round == kLocalRounds) {
      ++fallbacks_;
      grow(s);
      solve(now, true);
      return total + static_cast<int>(comp_.size());
    }
    for (; linked < comp_.size(); ++linked) {
      const Flow& fl = flows_[comp_[linked]];
      for (uint32_t i = 0; i < fl.len; ++i) {
        uint32_t l = hop(fl, i).link;
        if (lk_[l].stamp == s || slack(l)) continue;
        lk_[l].stamp = s;
        compLinks_.push_back(l);
      }
    }
    total += static_cast<int>(comp_.size());
    solve(now, true);
    ++checkRound_;
    viol_.clear();
    // A solved flow froze at its cap, or on a link that the solve filled and where no solved
    // flow runs faster: only the fixed flows there can (fixedMax_). A fixed flow's bottleneck
    // from before holds unless solved flows cross it.
    for (uint32_t f : comp_) {
      Flow& fl = flows_[f];
      checked_[f] = checkRound_;
      if (fl.bneck == kAtCap || fl.newRate >= fixedMax_[fl.bneck] * (1 - kTol)) continue;
      if (!bottlenecked(f, s)) viol_.push_back(f);
    }
    for (uint32_t l : compLinks_)
      for (const LinkFlow& e : linkFlows_[l]) {
        const uint32_t g = e.flow;
        Flow& fl = flows_[g];
        if (checked_[g] == checkRound_) continue;
        checked_[g] = checkRound_;
        if (fl.bneck == kAtCap || lk_[fl.bneck].stamp != s) continue;
        if (!bottlenecked(g, s)) viol_.push_back(g);
      }
    if (viol_.empty()) return total;
    // The flows without a bottleneck, and the flows at least as fast as one of them on a link
    // that can constrain (those it competes with).
    for (uint32_t v : viol_) {
      const Flow& fl = flows_[v];
      const double r = fl.stamp == s ? fl.newRate : fl.rate;
      if (fl.stamp != s) {
        flows_[v].stamp = s;
        comp_.push_back(v);
      }
      for (uint32_t i = 0; i < fl.len; ++i) {
        uint32_t l = hop(fl, i).link;
        if (slack(l)) continue;
        for (const LinkFlow& e : linkFlows_[l]) {
          const uint32_t g = e.flow;
          if (flows_[g].stamp == s || flows_[g].parked || flows_[g].rate < r * (1 - kTol)) continue;
          flows_[g].stamp = s;
          comp_.push_back(g);
        }
      }
    }
  }
}

void MaxMin::freeze(uint32_t f, double rate, uint32_t s, uint32_t bneck) {
  Flow& fl = flows_[f];
  fl.frozen = true;
  fl.newRate = rate;
  fl.bneck = bneck;
  for (uint32_t i = 0; i < fl.len; ++i) {
    uint32_t l2 = hop(fl, i).link;
    if (lk_[l2].stamp != s) continue;  // slack: not a constraint
    remCap_[l2] -= rate * hop(fl, i).weight;
    wsum_[l2] -= hop(fl, i).weight;
    if (!pushMark_[l2]) {  // its new share goes on the heap once, after this level
      pushMark_[l2] = 1;
      toPush_.push_back(l2);
    }
  }
}

void MaxMin::pushShares() {
  for (uint32_t l : toPush_) {
    pushMark_[l] = 0;
    ++linkVer_[l];
    if (wsum_[l] > 1e-9) heap_.push({std::max(0.0, remCap_[l] / wsum_[l]), l, linkVer_[l]});
  }
  toPush_.clear();
}

void MaxMin::solve(double now, bool fixed) {
  for (uint32_t f : comp_) {
    Flow& fl = flows_[f];
    fl.bytesLeft = std::max(0.0, fl.bytesLeft - fl.rate * (now - fl.lastT));
    fl.lastT = now;
    fl.frozen = false;
    fl.newRate = 0;
  }
  const uint32_t s = stamp_;  // comp_ and compLinks_ carry it
  for (uint32_t l : compLinks_) {
    remCap_[l] = lk_[l].cap;
    wsum_[l] = 0;
    fixedMax_[l] = 0;
    if (!fixed) continue;
    for (const LinkFlow& e : linkFlows_[l]) {
      const Flow& g = flows_[e.flow];
      if (g.stamp == s) continue;
      remCap_[l] -= g.rate * e.weight;
      fixedMax_[l] = std::max(fixedMax_[l], g.rate);
    }
  }
  for (uint32_t f : comp_) {
    Flow& fl = flows_[f];
    bool constrained = false, capOnLink = false;
    for (uint32_t i = 0; i < fl.len; ++i) {
      const PathHop& h = hop(fl, i);
      if (lk_[h.link].stamp != s) continue;
      wsum_[h.link] += h.weight;
      constrained = true;
      // The cap comes from this link, whose share never exceeds it: no entry of its own needed.
      capOnLink = capOnLink || lk_[h.link].cap / h.weight <= fl.cap;
    }
    if (constrained) {
      if (!capOnLink) heap_.push({fl.cap, kFlowBit | f, 0});
    } else {  // every link slack: the flow runs at its cap
      fl.frozen = true;
      fl.newRate = fl.cap;
      fl.bneck = kAtCap;
    }
  }
  for (uint32_t l : compLinks_)
    if (wsum_[l] > 0) heap_.push({std::max(0.0, remCap_[l] / wsum_[l]), l, ++linkVer_[l]});
  while (!heap_.empty()) {
    const Share sh = heap_.top();
    heap_.pop();
    double rate = sh.t;
    if (sh.link & kFlowBit) {
      uint32_t f = sh.link & ~kFlowBit;
      if (!flows_[f].frozen) freeze(f, rate, s, kAtCap);
      pushShares();
      continue;
    }
    if (sh.ver != linkVer_[sh.link]) continue;
    for (const LinkFlow& e : linkFlows_[sh.link])
      if (!flows_[e.flow].frozen) freeze(e.flow, rate, s, sh.link);
    pushShares();
  }
}

}  // namespace loom::sim
