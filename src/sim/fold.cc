#include "sim/fold.h"

#include <algorithm>
#include <cmath>

namespace loom::sim {
namespace {

uint64_t mix(uint64_t h, uint64_t v) {  // splitmix64 over h ^ v
  uint64_t x = h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t bitsOf(double d) {
  uint64_t u;
  static_assert(sizeof(u) == sizeof(d), "double is 64 bits");
  std::copy_n(reinterpret_cast<const char*>(&d), sizeof(d), reinterpret_cast<char*>(&u));
  return u;
}

bool isRecv(sched::OpKind k) {
  return k == sched::OpKind::kRecv || k == sched::OpKind::kRecvReduce;
}

// A shape's peer deltas per send and receive slot (SimStep::slot: order of first use).
struct Deltas {
  std::vector<int32_t> send, recv;
  // The slot that talks to `delta` in direction `send` (-1: none); slots are few, a scan will do.
  int slotOf(bool isSend, int32_t delta) const {
    const std::vector<int32_t>& v = isSend ? send : recv;
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i] == delta) return static_cast<int>(i);
    return -1;
  }
};

Deltas deltasOf(const Shape& sh) {
  Deltas d;
  for (const SimStep& st : sh.steps) {
    if (st.op != sched::OpKind::kSend && !isRecv(st.op)) continue;
    std::vector<int32_t>& v = st.op == sched::OpKind::kSend ? d.send : d.recv;
    if (v.size() <= st.slot) v.resize(st.slot + 1, 0);
    v[st.slot] = st.peerDelta;
  }
  return d;
}

// Two shapes with the same skeleton are the same schedule up to which peer each slot talks to:
// every field of every step but peerDelta is equal (ops, bytes, seq, slot, dependencies).
bool sameSkeleton(const Shape& a, const Shape& b) {
  if (a.steps.size() != b.steps.size() || a.deps != b.deps) return false;
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const SimStep &x = a.steps[i], &y = b.steps[i];
    if (x.op != y.op || x.inPlace != y.inPlace || x.seq != y.seq || x.slot != y.slot ||
        x.bytes != y.bytes || x.depBegin != y.depBegin || x.depCount != y.depCount)
      return false;
  }
  return true;
}

uint64_t skeletonHash(const Shape& sh) {
  uint64_t h = mix(0x5e1, sh.steps.size());
  for (const SimStep& st : sh.steps) {
    h = mix(h, static_cast<uint64_t>(st.op) | uint64_t{st.inPlace} << 7 | uint64_t{st.slot} << 8 |
                   uint64_t{st.seq} << 32);
    h = mix(mix(h, st.bytes), uint64_t{st.depCount} << 32 | st.depBegin);
  }
  for (uint32_t d : sh.deps) h = mix(h, d);
  return h;
}

class Folder {
 public:
  Folder(const Net& net, const ScheduleSet& set, const std::vector<int>& rankGpu,
         const SimOptions& opt, bool bundles, Folding* out)
      : net_(net),
        set_(set),
        rankGpu_(rankGpu),
        opt_(opt),
        out_(out),
        n_(set.nranks()),
        router_(&net, opt.routing, opt.seed) {
    router_.setBundles(bundles);  // paths name a bundle's first link for all its links
    router_.setCachePaths(false);
  }

  Status run();
  // A path crossed a bundle unevenly: the analysis must run again without bundles.
  bool violated() const { return router_.bundleViolated(); }

 private:
  int gpu(int r) const { return rankGpu_.empty() ? r : rankGpu_[r]; }
  int peer(int r, int32_t delta) const { return static_cast<int>((r + int64_t{delta}) % n_); }
  int32_t back(int32_t delta) const { return static_cast<int32_t>((n_ - int64_t{delta}) % n_); }
  const Deltas& deltas(int r) const { return deltas_[set_.shapeIdOfRank(r)]; }
  Status routeRank(int r, int32_t delta, Path* p) {
    return router_.route(gpu(r), gpu(peer(r, delta)), nullptr, p);
  }
  // Per rank and slot: the peer's slot for the other end (-1: none), in match_ at latOff_ (sends)
  // and recvOff_ (receives).
  void matchSlots();
  // Splits classes until every rank's peers (per slot) are in one class and talk to it through
  // one slot, and its sends have one latency; returns the number of classes.
  int refine();
  // Class paths, link classes; false (and split ranks by member signature) when a class path's
  // members cross different link classes.
  Status buildPaths(bool* stable);
  bool verifyClasses() const;
  void members(std::vector<uint32_t>* off, std::vector<int32_t>* list) const;

  const Net& net_;
  const ScheduleSet& set_;
  const std::vector<int>& rankGpu_;
  const SimOptions& opt_;
  Folding* out_;
  int n_;
  Router router_;
  std::vector<Deltas> deltas_;  // per shape
  std::vector<int32_t> skel_;   // per shape: skeleton id (sameSkeleton)
  int nskel_ = 0;
  std::vector<uint64_t> recvOff_;  // per rank: into match_ (after the sends' entries)
  std::vector<int32_t> match_;
  std::vector<uint64_t> latOff_;  // per rank: into lat_
  std::vector<uint64_t> lat_;     // per rank per send delta: latency bits
  std::vector<uint64_t> color_;   // per rank: dense class id
  int ncol_ = 0;
};

void Folder::matchSlots() {
  recvOff_.assign(n_, 0);
  match_.assign(latOff_[n_], 0);
  for (int r = 0; r < n_; ++r) {
    const Deltas& d = deltas(r);
    for (size_t i = 0; i < d.send.size(); ++i)
      match_[latOff_[r] + i] = deltas(peer(r, d.send[i])).slotOf(false, back(d.send[i]));
    recvOff_[r] = match_.size();
    for (int32_t dl : d.recv) match_.push_back(deltas(peer(r, dl)).slotOf(true, back(dl)));
  }
}

int Folder::refine() {
  std::vector<uint64_t> next(n_);
  std::unordered_map<uint64_t, uint64_t> ids;
  for (;;) {
    ids.clear();
    ids.reserve(2 * static_cast<size_t>(ncol_) + 16);
    for (int r = 0; r < n_; ++r) {
      const Deltas& d = deltas(r);
      uint64_t h = mix(0x51ed, color_[r]);
      for (size_t i = 0; i < d.send.size(); ++i) {
        h = mix(h, static_cast<uint32_t>(match_[latOff_[r] + i]));
        h = mix(h, color_[peer(r, d.send[i])]);
        h = mix(h, lat_[latOff_[r] + i]);
      }
      for (size_t i = 0; i < d.recv.size(); ++i) {
        h = mix(h, (1ull << 40) | static_cast<uint32_t>(match_[recvOff_[r] + i]));
        h = mix(h, color_[peer(r, d.recv[i])]);
      }
      next[r] = ids.emplace(h, ids.size()).first->second;
    }
    // The new colour of a rank hashes its old one, so the new partition refines the old; the
    // same number of classes means nothing split (a hash collision is caught by verifyClasses).
    bool done = static_cast<int>(ids.size()) == ncol_;
    ncol_ = static_cast<int>(ids.size());
    color_.swap(next);
    if (done || int64_t{opt_.foldMinMembers} * ncol_ > n_) return ncol_;
  }
}

void Folder::members(std::vector<uint32_t>* off, std::vector<int32_t>* list) const {
  off->assign(ncol_ + 1, 0);
  for (int r = 0; r < n_; ++r) ++(*off)[color_[r] + 1];
  for (int c = 0; c < ncol_; ++c) (*off)[c + 1] += (*off)[c];
  list->resize(n_);
  std::vector<uint32_t> fill(off->begin(), off->end() - 1);
  for (int r = 0; r < n_; ++r) (*list)[fill[color_[r]]++] = r;  // ascending: rep = first
}

bool Folder::verifyClasses() const {
  std::vector<int32_t> rep(ncol_, -1);
  for (int r = 0; r < n_; ++r) {
    int c = static_cast<int>(color_[r]);
    if (rep[c] < 0) {
      rep[c] = r;
      continue;
    }
    int q = rep[c];
    if (skel_[set_.shapeIdOfRank(r)] != skel_[set_.shapeIdOfRank(q)]) return false;
    const Deltas &d = deltas(r), &e = deltas(q);
    for (size_t i = 0; i < d.send.size(); ++i) {
      if (color_[peer(r, d.send[i])] != color_[peer(q, e.send[i])]) return false;
      if (lat_[latOff_[r] + i] != lat_[latOff_[q] + i]) return false;
      if (match_[latOff_[r] + i] != match_[latOff_[q] + i]) return false;
    }
    for (size_t i = 0; i < d.recv.size(); ++i) {
      if (color_[peer(r, d.recv[i])] != color_[peer(q, e.recv[i])]) return false;
      if (match_[recvOff_[r] + i] != match_[recvOff_[q] + i]) return false;
    }
  }
  return true;
}

Status Folder::buildPaths(bool* stable) {
  std::vector<uint32_t> moff;
  std::vector<int32_t> mlist;
  members(&moff, &mlist);
  // Class paths and the per-link weight each puts on the links it crosses (all members summed).
  // Members of a class run one skeleton: a send slot's delta is each member's own.
  struct PathKey {
    int cls;
    uint32_t slot;
  };
  std::vector<PathKey> keys;
  for (int c = 0; c < ncol_; ++c) {
    int rep = mlist[moff[c]];
    for (size_t i = 0; i < deltas(rep).send.size(); ++i)
      keys.push_back({c, static_cast<uint32_t>(i)});
  }
  auto route = [&](int r, uint32_t slot, Path* p) { return routeRank(r, deltas(r).send[slot], p); };
  const int nl = net_.numLinks();
  std::vector<double> acc(nl, 0.0);
  std::vector<uint8_t> mark(nl, 0);
  std::vector<int32_t> touched;
  std::vector<uint32_t> pOff(keys.size() + 1, 0);
  std::vector<int32_t> pLink;
  std::vector<double> pW;
  Path p;
  for (size_t k = 0; k < keys.size(); ++k) {
    for (uint32_t i = moff[keys[k].cls]; i < moff[keys[k].cls + 1]; ++i) {
      LOOM_CHECK(route(mlist[i], keys[k].slot, &p));
      for (const PathHop& h : p.hops) {
        if (!mark[h.link]) {
          mark[h.link] = 1;
          touched.push_back(h.link);
        }
        acc[h.link] += h.weight;
      }
    }
    std::sort(touched.begin(), touched.end());
    for (int32_t l : touched) {
      pLink.push_back(l);
      pW.push_back(acc[l]);
      acc[l] = 0;
      mark[l] = 0;
    }
    touched.clear();
    pOff[k + 1] = static_cast<uint32_t>(pLink.size());
  }
  // Link signature: capacity + (class path, weight) list; equal signatures form a link class.
  std::vector<uint32_t> lOff(nl + 1, 0);
  for (int32_t l : pLink) ++lOff[l + 1];
  for (int l = 0; l < nl; ++l) lOff[l + 1] += lOff[l];
  std::vector<std::pair<uint32_t, double>> lSig(pLink.size());
  {
    std::vector<uint32_t> fill(lOff.begin(), lOff.end() - 1);
    for (size_t k = 0; k < keys.size(); ++k)
      for (uint32_t j = pOff[k]; j < pOff[k + 1]; ++j)
        lSig[fill[pLink[j]]++] = {static_cast<uint32_t>(k), pW[j]};
  }
  out_->linkClass.assign(nl, -1);
  out_->linkCap.clear();
  std::unordered_map<uint64_t, int32_t> lids;
  std::vector<int32_t> lrep;
  for (int l = 0; l < nl; ++l) {
    if (lOff[l] == lOff[l + 1]) continue;
    uint64_t h = mix(0x11, bitsOf(net_.link(l).bytesPerSec));
    for (uint32_t j = lOff[l]; j < lOff[l + 1]; ++j)
      h = mix(mix(h, lSig[j].first), bitsOf(lSig[j].second));
    auto [it, fresh] = lids.emplace(h, static_cast<int32_t>(lrep.size()));
    if (fresh) {
      lrep.push_back(l);
      out_->linkCap.push_back(net_.link(l).bytesPerSec);
    } else {
      int q = lrep[it->second];  // same hash: check it is the same signature
      bool same =
          net_.link(q).bytesPerSec == net_.link(l).bytesPerSec &&
          lOff[q + 1] - lOff[q] == lOff[l + 1] - lOff[l] &&
          std::equal(lSig.begin() + lOff[l], lSig.begin() + lOff[l + 1], lSig.begin() + lOff[q]);
      if (!same) return internalError("sim fold: link signature hash collision");
    }
    out_->linkClass[l] = it->second;
  }
  // With bundles, paths named only a bundle's first link, for each of its links alike.
  if (router_.numBundles() > 0 && !router_.bundleViolated()) {
    std::vector<double> cls(out_->linkClass.begin(), out_->linkClass.end());
    router_.expandBundles(&cls);
    for (int l = 0; l < nl; ++l) out_->linkClass[l] = static_cast<int32_t>(cls[l]);
  }
  // Members of one class path must cross the same set of link classes; else split the class.
  std::vector<uint64_t> split(n_, 0);
  std::vector<int32_t> sig, sig0;
  bool splitAny = false;
  for (size_t k = 0; k < keys.size(); ++k) {
    bool differ = false;
    for (uint32_t i = moff[keys[k].cls]; i < moff[keys[k].cls + 1]; ++i) {
      LOOM_CHECK(route(mlist[i], keys[k].slot, &p));
      sig.clear();
      for (const PathHop& h : p.hops) sig.push_back(out_->linkClass[h.link]);
      std::sort(sig.begin(), sig.end());
      sig.erase(std::unique(sig.begin(), sig.end()), sig.end());
      if (i == moff[keys[k].cls]) {
        sig0 = sig;
      } else if (sig != sig0) {
        differ = true;
      }
      uint64_t h = keys[k].slot;
      for (int32_t c : sig) h = mix(h, static_cast<uint32_t>(c));
      split[mlist[i]] = mix(split[mlist[i]], h);
    }
    splitAny = splitAny || differ;
  }
  if (splitAny) {
    std::unordered_map<uint64_t, uint64_t> ids;
    for (int r = 0; r < n_; ++r)
      color_[r] = ids.emplace(mix(color_[r], split[r]), ids.size()).first->second;
    ncol_ = static_cast<int>(ids.size());
    *stable = false;
    return Status();
  }
  // Quotient paths: per link class crossed, the weight on each of its links.
  out_->paths.clear();
  out_->hops.clear();
  out_->pathOf.clear();
  std::vector<uint8_t> seen(out_->linkCap.size(), 0);
  for (size_t k = 0; k < keys.size(); ++k) {
    Folding::ClassPath cp;
    cp.off = static_cast<uint32_t>(out_->hops.size());
    for (uint32_t j = pOff[k]; j < pOff[k + 1]; ++j) {
      int32_t lc = out_->linkClass[pLink[j]];
      if (seen[lc]) continue;
      seen[lc] = 1;
      out_->hops.push_back({lc, pW[j]});
    }
    for (uint32_t j = cp.off; j < out_->hops.size(); ++j) seen[out_->hops[j].link] = 0;
    cp.len = static_cast<uint32_t>(out_->hops.size()) - cp.off;
    int rep = mlist[moff[keys[k].cls]];
    const int32_t delta = deltas(rep).send[keys[k].slot];
    LOOM_CHECK(routeRank(rep, delta, &p));
    cp.local = gpu(rep) == gpu(peer(rep, delta));
    cp.latency = pathLatency(p, cp.local, opt_);
    out_->pathOf[Folding::key(keys[k].cls, delta)] = static_cast<uint32_t>(k);
    out_->paths.push_back(cp);
  }
  out_->classOf.assign(color_.begin(), color_.end());
  out_->rep.resize(ncol_);
  out_->size.resize(ncol_);
  for (int c = 0; c < ncol_; ++c) {
    out_->rep[c] = mlist[moff[c]];
    out_->size[c] = static_cast<int32_t>(moff[c + 1] - moff[c]);
  }
  *stable = true;
  return Status();
}

Status Folder::run() {
  if (opt_.routing == RoutingMode::kUgal) {
    out_->note = "not folded: UGAL routes depend on live link load";
    return Status();
  }
  // Skeletons: shapes alike up to their peers (a host's GPUs in a ring inside the host differ in
  // the delta to the next one, 1 or 1 - L, not in the skeleton).
  skel_.assign(set_.numShapes(), -1);
  {
    std::unordered_multimap<uint64_t, int32_t> byHash;  // skeleton hash -> first shape
    for (int s = 0; s < set_.numShapes(); ++s) {
      const uint64_t h = skeletonHash(set_.shape(s));
      auto range = byHash.equal_range(h);
      for (auto it = range.first; it != range.second && skel_[s] < 0; ++it)
        if (sameSkeleton(set_.shape(it->second), set_.shape(s))) skel_[s] = skel_[it->second];
      if (skel_[s] < 0) {
        skel_[s] = nskel_++;
        byHash.emplace(h, s);
      }
    }
  }
  if (int64_t{opt_.foldMinMembers} * nskel_ > n_) {  // classes >= skeletons: no need to route
    out_->note = strCat("not folded: ", nskel_, " different schedules for ", n_, " ranks");
    return Status();
  }
  deltas_.resize(set_.numShapes());
  for (int s = 0; s < set_.numShapes(); ++s) deltas_[s] = deltasOf(set_.shape(s));
  latOff_.assign(n_ + 1, 0);
  for (int r = 0; r < n_; ++r)
    latOff_[r + 1] = latOff_[r] + deltas_[set_.shapeIdOfRank(r)].send.size();
  lat_.resize(latOff_[n_]);
  Path p;
  for (int r = 0; r < n_; ++r) {
    const Deltas& d = deltas_[set_.shapeIdOfRank(r)];
    for (size_t i = 0; i < d.send.size(); ++i) {
      LOOM_CHECK(routeRank(r, d.send[i], &p));
      lat_[latOff_[r] + i] = bitsOf(pathLatency(p, gpu(r) == gpu(peer(r, d.send[i])), opt_));
    }
  }
  matchSlots();
  color_.resize(n_);
  for (int r = 0; r < n_; ++r) color_[r] = skel_[set_.shapeIdOfRank(r)];
  ncol_ = nskel_;
  for (int round = 0;; ++round) {
    refine();
    if (int64_t{opt_.foldMinMembers} * ncol_ > n_ || round == 16) {
      out_->note = strCat("not folded: ", ncol_, " classes for ", n_,
                          " ranks (too little symmetry for this routing)");
      return Status();
    }
    if (!verifyClasses()) return internalError("sim fold: rank class hash collision");
    bool stable = false;
    LOOM_CHECK(buildPaths(&stable));
    if (violated()) return Status();  // foldRanks runs again without bundles
    if (stable) break;
  }
  out_->folded = true;
  out_->note = strCat("folded: ", n_, " ranks in ", ncol_, " classes, ", net_.numLinks(),
                      " links in ", out_->linkCap.size(), " classes");
  return Status();
}

}  // namespace

double pathLatency(const Path& p, bool selfMessage, const SimOptions& opt) {
  if (selfMessage) return 0;
  if (p.nvlink) return opt.latNvlinkUs * 1e-6;
  if (p.intraNode) return opt.latPcieUs * 1e-6;
  return (opt.latNetUs + opt.latHopUs * p.switchHops) * 1e-6;
}

Status foldRanks(const Net& net, const ScheduleSet& set, const std::vector<int>& rankGpu,
                 const SimOptions& opt, Folding* out) {
  // Bundles as in an unfolded run (engine.cc): the analysis routes every member's paths, ~70 hops
  // instead of ~4,200 for a sprayed path across pods of a 3-level fat-tree.
  const bool bundles = opt.bundle && !opt.exact &&
                       (opt.routing == RoutingMode::kSpray || opt.routing == RoutingMode::kValiant);
  *out = Folding();
  Folder f(net, set, rankGpu, opt, bundles, out);
  LOOM_CHECK(f.run());
  if (!bundles || !f.violated()) return Status();
  *out = Folding();
  Folder g(net, set, rankGpu, opt, false, out);
  return g.run();
}

}  // namespace loom::sim
