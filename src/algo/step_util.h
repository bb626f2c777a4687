// Small helpers shared by the builders: a Send step value (for Schedule::add with a vector of
// dependencies) and a join step (a zero-byte copy that waits for many steps, so later phases need
// one dependency instead of hundreds).
#pragma once

#include <vector>

#include "sched/schedule.h"

namespace loom::algo {

inline sched::Step sendStep(int peer, sched::BufRef src, uint64_t bytes) {
  sched::Step s;
  s.op = sched::OpKind::kSend;
  s.peer = peer;
  s.src = src;
  s.bytes = bytes;
  return s;
}

inline sched::Step recvStep(int peer, sched::BufRef dst, uint64_t bytes) {
  sched::Step s;
  s.op = sched::OpKind::kRecv;
  s.peer = peer;
  s.dst = dst;
  s.bytes = bytes;
  return s;
}

// A zero-byte copy depending on `deps` (-1 entries ignored); returns its index, or -1 when there
// is nothing to wait for.
inline int joinSteps(sched::Schedule* s, const std::vector<int>& deps) {
  std::vector<int> real;
  for (int d : deps)
    if (d >= 0) real.push_back(d);
  if (real.empty()) return -1;
  if (real.size() == 1) return real[0];
  sched::Step j;
  j.op = sched::OpKind::kCopy;
  j.src = {sched::kBufRecv, 0};
  j.dst = {sched::kBufRecv, 0};
  j.bytes = 0;
  return s->add(j, real);
}

}  // namespace loom::algo
