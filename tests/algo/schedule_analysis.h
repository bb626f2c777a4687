// Test helpers that look at schedules as data: bytes on the wire, and a dependency analysis that
// proves no step reads a byte of the receive buffer or scratch before a step it (transitively)
// depends on has written it, whatever order an executor picks.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "sched/schedule.h"

namespace loom::testing {

// Sorted, merged byte intervals.
class Intervals {
 public:
  void add(uint64_t lo, uint64_t hi) {
    if (lo >= hi) return;
    v_.emplace_back(lo, hi);
    std::sort(v_.begin(), v_.end());
    std::vector<std::pair<uint64_t, uint64_t>> m;
    for (auto& x : v_) {
      if (!m.empty() && x.first <= m.back().second)
        m.back().second = std::max(m.back().second, x.second);
      else
        m.push_back(x);
    }
    v_.swap(m);
  }
  void addAll(const Intervals& o) {
    for (auto& x : o.v_) add(x.first, x.second);
  }
  bool covers(uint64_t lo, uint64_t hi) const {
    if (lo >= hi) return true;
    for (auto& x : v_)
      if (x.first <= lo && hi <= x.second) return true;
    return false;
  }

 private:
  std::vector<std::pair<uint64_t, uint64_t>> v_;
};

// For an out-of-place schedule: returns "" when every read of slots 1 (recv) and 2 (scratch) is
// covered by writes of steps in its dependency closure, else a description of the first bad read.
inline std::string readBeforeWrite(const sched::Schedule& s) {
  using sched::OpKind;
  const size_t n = s.steps.size();
  // written[i][slot]: bytes written by i and everything i depends on (closure), slots 1 and 2.
  std::vector<Intervals> wRecv(n), wScratch(n);
  for (size_t i = 0; i < n; ++i) {
    const sched::Step& st = s.steps[i];
    for (uint32_t k = 0; k < st.depCount; ++k) {
      uint32_t d = s.deps[st.depBegin + k];
      wRecv[i].addAll(wRecv[d]);
      wScratch[i].addAll(wScratch[d]);
    }
    auto check = [&](const sched::BufRef& b) -> bool {
      if (b.buf == sched::kBufRecv) return wRecv[i].covers(b.offset, b.offset + st.bytes);
      if (b.buf == sched::kBufScratch) return wScratch[i].covers(b.offset, b.offset + st.bytes);
      return true;
    };
    bool readsSrc = st.op != OpKind::kRecv;
    bool readsDst = st.op == OpKind::kReduce;
    if ((readsSrc && !check(st.src)) || (readsDst && !check(st.dst)))
      return "step " + std::to_string(i) + " (" + sched::opKindName(st.op) +
             ") reads bytes no dependency wrote";
    if (st.op != OpKind::kSend) {
      if (st.dst.buf == sched::kBufRecv) wRecv[i].add(st.dst.offset, st.dst.offset + st.bytes);
      if (st.dst.buf == sched::kBufScratch)
        wScratch[i].add(st.dst.offset, st.dst.offset + st.bytes);
    }
  }
  return "";
}

}  // namespace loom::testing
