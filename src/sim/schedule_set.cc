#include "sim/schedule_set.h"

#include <unordered_map>

namespace loom::sim {
namespace {

uint64_t hashMix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

bool isComm(sched::OpKind k) {
  return k == sched::OpKind::kSend || k == sched::OpKind::kRecv || k == sched::OpKind::kRecvReduce;
}

// A reduction whose local operand is its destination (SimStep::inPlace): Reduce always (dst =
// dst (op) src); RecvReduce when src and dst are the same bytes, or the same offset of the send
// and receive buffers of an in-place call.
bool reducesInPlace(const sched::Step& st, bool callInPlace) {
  if (st.op == sched::OpKind::kReduce) return true;
  if (st.op != sched::OpKind::kRecvReduce || st.src.offset != st.dst.offset) return false;
  const auto user = [](uint16_t b) { return b == sched::kBufSend || b == sched::kBufRecv; };
  return st.src.buf == st.dst.buf || (callInPlace && user(st.src.buf) && user(st.dst.buf));
}

// Rank s.rank's schedule has shape `sh` (ops, peer deltas, bytes, dependencies; seq and slot
// follow from the ops and peers), compared without building a Shape for it. A schedule that
// matches a kept shape is valid (peers in range, dependencies backwards) as that one was.
bool sameShape(const Shape& sh, const sched::Schedule& s, int nranks, bool callInPlace) {
  if (sh.steps.size() != s.steps.size()) return false;
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const sched::Step& st = s.steps[i];
    const SimStep& o = sh.steps[i];
    int32_t delta = 0;
    if (isComm(st.op)) {
      if (st.peer < 0 || st.peer >= nranks) return false;
      delta = st.peer >= s.rank ? st.peer - s.rank : st.peer - s.rank + nranks;
    }
    if (o.op != st.op || o.peerDelta != delta || o.bytes != st.bytes || o.depCount != st.depCount ||
        o.inPlace != reducesInPlace(st, callInPlace) ||
        static_cast<uint64_t>(st.depBegin) + st.depCount > s.deps.size())
      return false;
    for (uint32_t k = 0; k < st.depCount; ++k)
      if (sh.deps[o.depBegin + k] != s.deps[st.depBegin + k]) return false;
  }
  return true;
}

// Hash of the steps that find a kept shape: the step count and a sample of the steps (the first
// 256, then every 64th); sameShape compares all of them.
uint64_t sampleHash(const sched::Schedule& s, int nranks) {
  uint64_t h = s.steps.size();
  for (size_t i = 0; i < s.steps.size(); i = i < 256 ? i + 1 : i + 64) {
    const sched::Step& st = s.steps[i];
    int64_t delta = 0;
    if (isComm(st.op)) {
      delta = (int64_t{st.peer} - s.rank) % nranks;
      if (delta < 0) delta += nranks;
    }
    if (static_cast<uint64_t>(st.depBegin) + st.depCount <= s.deps.size())
      for (uint32_t k = 0; k < st.depCount; ++k) h = hashMix(h, s.deps[st.depBegin + k]);
    h = hashMix(h, static_cast<uint64_t>(st.op) | (static_cast<uint64_t>(delta) << 8));
    h = hashMix(h, st.bytes ^ (static_cast<uint64_t>(st.depCount) << 48));
  }
  return h;
}

// Peers in range, dependencies in range and backwards: the first violation.
Status checkSteps(const sched::Schedule& s, int nranks) {
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const sched::Step& st = s.steps[i];
    if (st.op == sched::OpKind::kHostAllReduce)
      return invalidArgument("sim: rank ", s.rank, " step ", i,
                             " is a transport's one-host collective (the direct path), which the "
                             "simulator does not model; the cost model prices it");
    if (isComm(st.op) && (st.peer < 0 || st.peer >= nranks))
      return invalidArgument("sim: rank ", s.rank, " step ", i, " (", sched::opKindName(st.op),
                             ") has peer ", st.peer, " outside 0..", nranks - 1);
    if (static_cast<uint64_t>(st.depBegin) + st.depCount > s.deps.size())
      return invalidArgument("sim: rank ", s.rank, " step ", i, " has deps out of range");
    for (uint32_t k = 0; k < st.depCount; ++k) {
      uint32_t d = s.deps[st.depBegin + k];
      if (d >= i)
        return invalidArgument("sim: rank ", s.rank, " step ", i, " depends on later step ", d);
    }
  }
  return Status();
}

}  // namespace

Status ScheduleSet::add(const sched::Schedule& s, bool built) {
  if (s.rank < 0 || s.rank >= nranks_ || s.nranks != nranks_)
    return invalidArgument("sim::ScheduleSet: schedule of rank ", s.rank, " of ", s.nranks,
                           " does not fit a set of ", nranks_, " ranks");
  if (shapeOf_[s.rank] >= 0) return invalidArgument("sim::ScheduleSet: rank ", s.rank, " twice");
  // Most ranks of a large set have the shape of one already kept: then no Shape is built.
  const uint64_t h = sampleHash(s, nranks_);
  auto range = byHash_.equal_range(h);
  for (auto it = range.first; it != range.second; ++it) {
    if (sameShape(shapes_[it->second], s, nranks_, callInPlace)) {
      shapeOf_[s.rank] = it->second;
      totalSteps_ += s.steps.size();
      built_ += built;
      return Status();
    }
  }
  LOOM_CHECK(checkSteps(s, nranks_));
  totalSteps_ += s.steps.size();
  built_ += built;
  // A new shape.
  Shape sh;
  sh.hash = h;
  sh.steps.resize(s.steps.size());
  sh.deps.reserve(s.deps.size());
  std::unordered_map<uint64_t, uint32_t> seqs;     // (dir, peer) -> count
  std::unordered_map<int32_t, uint32_t> slots[2];  // per direction: delta -> slot
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const sched::Step& st = s.steps[i];
    SimStep& o = sh.steps[i];
    o.op = st.op;
    o.inPlace = reducesInPlace(st, callInPlace);
    o.bytes = st.bytes;
    if (isComm(st.op)) {
      const bool send = st.op == sched::OpKind::kSend;
      o.peerDelta = (st.peer - s.rank + nranks_) % nranks_;
      o.seq = seqs[(send ? 0ull : 1ull << 32) | static_cast<uint32_t>(st.peer)]++;
      auto& sl = slots[send ? 0 : 1];
      o.slot = sl.emplace(o.peerDelta, static_cast<uint32_t>(sl.size())).first->second;
    }
    o.depBegin = static_cast<uint32_t>(sh.deps.size());
    o.depCount = st.depCount;
    for (uint32_t k = 0; k < st.depCount; ++k) sh.deps.push_back(s.deps[st.depBegin + k]);
  }
  // Dependents (reverse edges), grouped per step.
  std::vector<uint32_t> count(sh.steps.size() + 1, 0);
  for (uint32_t d : sh.deps) ++count[d + 1];
  for (size_t i = 1; i < count.size(); ++i) count[i] += count[i - 1];
  sh.next.resize(sh.deps.size());
  std::vector<uint32_t> fill(count.begin(), count.end() - 1);
  for (size_t i = 0; i < sh.steps.size(); ++i) {
    SimStep& o = sh.steps[i];
    o.nextBegin = count[i];
    o.nextCount = count[i + 1] - count[i];
    for (uint32_t k = 0; k < o.depCount; ++k) sh.next[fill[sh.deps[o.depBegin + k]]++] = i;
  }
  int id = static_cast<int>(shapes_.size());
  shapes_.push_back(std::move(sh));
  byHash_.emplace(h, id);
  shapeOf_[s.rank] = id;
  return Status();
}

Status ScheduleSet::addSameAs(int rank, int like) {
  if (rank < 0 || rank >= nranks_ || like < 0 || like >= nranks_ || shapeOf_[like] < 0)
    return invalidArgument("sim::ScheduleSet: rank ", rank, " like rank ", like, " of ", nranks_,
                           " (which must be added first)");
  if (shapeOf_[rank] >= 0) return invalidArgument("sim::ScheduleSet: rank ", rank, " twice");
  shapeOf_[rank] = shapeOf_[like];
  totalSteps_ += shapes_[shapeOf_[like]].steps.size();
  return Status();
}

Status ScheduleSet::complete() const {
  for (int r = 0; r < nranks_; ++r)
    if (shapeOf_[r] < 0) return invalidArgument("sim::ScheduleSet: no schedule for rank ", r);
  return Status();
}

namespace {

// Ranks per host when every host holds that many consecutive ranks (and hosts differ between
// blocks); 0 otherwise. Empty hostOf: every rank its own host (1).
int hostBlock(int n, const std::vector<int>& hostOf) {
  if (hostOf.empty()) return 1;
  int g = 1;
  while (g < n && hostOf[g] == hostOf[0]) ++g;
  if (n % g != 0) return 0;
  std::unordered_map<int, int> seen;
  for (int r = 0; r < n; ++r) {
    if (hostOf[r] != hostOf[r - r % g]) return 0;
    if (r % g == 0 && !seen.emplace(hostOf[r], r).second) return 0;
  }
  return g;
}

// Rank r's schedule with every peer moved `shift` places along its host's block (the GPU j of a
// host becomes GPU j + shift mod block): the schedule of rank r + shift when the plan treats a
// host's GPUs alike (hier_tree: GPU j runs the rail-j tree; only its ring peers inside the host
// wrap differently).
sched::Schedule rotated(const sched::Schedule& s, int shift, int block) {
  sched::Schedule o = s;
  o.rank = s.rank - s.rank % block + (s.rank % block + shift) % block;
  for (sched::Step& st : o.steps)
    if (isComm(st.op)) st.peer = st.peer - st.peer % block + (st.peer % block + shift) % block;
  return o;
}

// Same steps as far as the simulator sees them (ops, peers, bytes, dependencies).
bool sameSteps(const sched::Schedule& a, const sched::Schedule& b) {
  if (a.steps.size() != b.steps.size() || a.deps != b.deps) return false;
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const sched::Step &x = a.steps[i], &y = b.steps[i];
    if (x.op != y.op || x.bytes != y.bytes || x.depBegin != y.depBegin ||
        x.depCount != y.depCount || (isComm(x.op) && x.peer != y.peer))
      return false;
  }
  return true;
}

}  // namespace

Status buildScheduleSet(const RankBuildFn& build, const sched::CollArgs& args, int nranks,
                        const std::vector<int>& hostOf, ScheduleSet* out, bool symmetric) {
  sched::Group g;
  g.nranks = nranks;
  g.hostOf = hostOf;
  out->callInPlace = args.inPlace;
  auto buildOne = [&](int r, sched::Schedule* s) -> Status {
    g.rank = r;
    Status st = build(args, g, s);
    if (!st.ok()) return Status(st.code(), strCat("building rank ", r, ": ", st.message()));
    s->rank = r;
    s->nranks = nranks;
    if (out->algo.empty()) out->algo = s->algo;
    return Status();
  };
  auto add = [&](int r) -> Status {
    if (out->has(r)) return Status();
    sched::Schedule s;
    LOOM_CHECK(buildOne(r, &s));
    return out->add(s);
  };
  const int block = hostBlock(nranks, hostOf);
  const int kProbes = 64;
  if (symmetric && block > 0 && nranks > 2 * block + kProbes) {
    // Period: 1 when the first block's ranks are all alike, else the block.
    for (int r = 0; r < block; ++r) LOOM_CHECK(add(r));
    int period = 1;
    for (int r = 1; r < block; ++r)
      if (out->shapeIdOfRank(r) != out->shapeIdOfRank(0)) period = block;
    LOOM_CHECK(add(period));  // rank `period` is the first of the next period
    bool ok = out->shapeIdOfRank(period) == out->shapeIdOfRank(0);
    std::vector<int> probes;
    for (int r = nranks - period; r < nranks; ++r) probes.push_back(r);
    for (int k = 1; k <= kProbes; ++k)
      probes.push_back(static_cast<int>((int64_t{nranks} * k) / (kProbes + 1) + k * 7919 % period));
    for (size_t i = 0; ok && i < probes.size(); ++i) {
      int r = probes[i] % nranks;
      LOOM_CHECK(add(r));
      ok = out->shapeIdOfRank(r) == out->shapeIdOfRank(r % period);
    }
    if (ok) {
      for (int r = 0; r < nranks; ++r)
        if (!out->has(r)) LOOM_CHECK(out->addSameAs(r, r % period));
      return out->complete();
    }
  }
  // Rotation inside hosts: when GPU j of every probed host runs GPU 0's schedule rotated by j,
  // only GPU 0 of each host is built and the others take it rotated.
  const int hosts = block > 1 ? nranks / block : 0;
  bool rotate = symmetric && hosts > 1;
  std::vector<int> probeHosts = {0, hosts - 1};
  for (int k = 1; k <= kProbes / 4 && k < hosts; ++k)
    probeHosts.push_back(static_cast<int>((int64_t{hosts} * k) / (kProbes / 4 + 1)));
  for (size_t i = 0; rotate && i < probeHosts.size(); ++i) {
    sched::Schedule s0, sj;
    LOOM_CHECK(buildOne(probeHosts[i] * block, &s0));
    for (int j = 1; rotate && j < block; ++j) {
      LOOM_CHECK(buildOne(probeHosts[i] * block + j, &sj));
      rotate = sameSteps(rotated(s0, j, block), sj);
    }
  }
  for (int h = 0; rotate && h < hosts; ++h) {
    sched::Schedule s0;
    LOOM_CHECK(buildOne(h * block, &s0));
    for (int j = 0; j < block; ++j)
      if (!out->has(h * block + j))
        LOOM_CHECK(j == 0 ? out->add(s0) : out->add(rotated(s0, j, block), false));
  }
  for (int r = 0; r < nranks; ++r) LOOM_CHECK(add(r));
  return out->complete();
}

}  // namespace loom::sim
