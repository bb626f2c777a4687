#include "sched/schedule.h"

#include <sstream>

namespace loom::sched {

const char* opKindName(OpKind k) {
  switch (k) {
    case OpKind::kSend:
      return "send";
    case OpKind::kRecv:
      return "recv";
    case OpKind::kRecvReduce:
      return "recvreduce";
    case OpKind::kCopy:
      return "copy";
    case OpKind::kReduce:
      return "reduce";
    case OpKind::kHostAllReduce:
      return "hostallreduce";
  }
  return "?";
}

const char* collName(CollType c) {
  switch (c) {
    case CollType::kAllReduce:
      return "allreduce";
    case CollType::kBroadcast:
      return "broadcast";
    case CollType::kReduce:
      return "reduce";
    case CollType::kAllGather:
      return "allgather";
    case CollType::kReduceScatter:
      return "reducescatter";
    case CollType::kAllToAll:
      return "alltoall";
    case CollType::kSend:
      return "send";
    case CollType::kRecv:
      return "recv";
    case CollType::kBarrier:
      return "barrier";
    case CollType::kGather:
      return "gather";
    case CollType::kScatter:
      return "scatter";
    case CollType::kAllToAllv:
      return "alltoallv";
  }
  return "?";
}

namespace {

template <typename Deps>
int addStep(Schedule* sch, const Step& s, const Deps& dependsOn) {
  Step st = s;
  st.depBegin = static_cast<uint32_t>(sch->deps.size());
  st.depCount = 0;
  for (int d : dependsOn) {
    if (d < 0) continue;  // -1 means "no dependency" so builders can pass optional deps
    sch->deps.push_back(static_cast<uint32_t>(d));
    ++st.depCount;
  }
  sch->steps.push_back(st);
  return static_cast<int>(sch->steps.size()) - 1;
}

}  // namespace

// No vector per step: simulating 16,384 ranks builds hundreds of millions of steps.
int Schedule::add(const Step& s, std::initializer_list<int> dependsOn) {
  return addStep(this, s, dependsOn);
}

int Schedule::add(const Step& s, const std::vector<int>& dependsOn) {
  return addStep(this, s, dependsOn);
}

int Schedule::send(int peer, BufRef src, uint64_t bytes, std::initializer_list<int> d) {
  Step s;
  s.op = OpKind::kSend;
  s.peer = peer;
  s.src = src;
  s.bytes = bytes;
  return add(s, d);
}

int Schedule::recv(int peer, BufRef dst, uint64_t bytes, std::initializer_list<int> d) {
  Step s;
  s.op = OpKind::kRecv;
  s.peer = peer;
  s.dst = dst;
  s.bytes = bytes;
  return add(s, d);
}

int Schedule::recvReduce(int peer, BufRef src, BufRef dst, uint64_t bytes,
                         std::initializer_list<int> d) {
  Step s;
  s.op = OpKind::kRecvReduce;
  s.peer = peer;
  s.src = src;
  s.dst = dst;
  s.bytes = bytes;
  return add(s, d);
}

int Schedule::copy(BufRef src, BufRef dst, uint64_t bytes, std::initializer_list<int> d) {
  Step s;
  s.op = OpKind::kCopy;
  s.src = src;
  s.dst = dst;
  s.bytes = bytes;
  return add(s, d);
}

int Schedule::reduce(BufRef src, BufRef dst, uint64_t bytes, std::initializer_list<int> d) {
  Step s;
  s.op = OpKind::kReduce;
  s.src = src;
  s.dst = dst;
  s.bytes = bytes;
  return add(s, d);
}

int Schedule::hostAllReduce(BufRef src, BufRef dst, uint64_t bytes, std::initializer_list<int> d) {
  Step s;
  s.op = OpKind::kHostAllReduce;
  s.src = src;
  s.dst = dst;
  s.bytes = bytes;
  return add(s, d);
}

uint16_t Schedule::append(const Schedule& other) {
  const uint16_t base = numBuffers;
  const uint32_t stepShift = static_cast<uint32_t>(steps.size());
  const uint32_t depShift = static_cast<uint32_t>(deps.size());
  const uint64_t scratchShift = scratchBytes;
  auto remap = [&](BufRef r) {
    if (r.buf == kBufScratch) {
      r.offset += scratchShift;
    } else if (r.buf < kBufScratch) {
      r.buf = static_cast<uint16_t>(base + r.buf);
    } else {
      r.buf = static_cast<uint16_t>(base + r.buf - 1);
    }
    return r;
  };
  for (Step s : other.steps) {
    s.src = remap(s.src);
    s.dst = remap(s.dst);
    s.depBegin += depShift;
    steps.push_back(s);
  }
  for (uint32_t d : other.deps) deps.push_back(d + stepShift);
  scratchBytes += other.scratchBytes;
  numBuffers = static_cast<uint16_t>(numBuffers + other.numBuffers - 1);
  if (!other.algo.empty()) algo = algo.empty() ? other.algo : algo + "+" + other.algo;
  return base;
}

uint64_t Schedule::bytesSent() const {
  uint64_t b = 0;
  for (const Step& s : steps)
    if (s.op == OpKind::kSend) b += s.bytes;
  return b;
}

std::string Schedule::toString() const {
  std::ostringstream os;
  os << "schedule " << algo << " rank " << rank << "/" << nranks << " steps " << steps.size()
     << " scratch " << scratchBytes << "\n";
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    os << "  [" << i << "] " << opKindName(s.op);
    if (s.peer >= 0) os << " peer " << s.peer;
    os << " src " << s.src.buf << "+" << s.src.offset << " dst " << s.dst.buf << "+" << s.dst.offset
       << " bytes " << s.bytes;
    if (s.depCount) {
      os << " deps";
      for (uint32_t k = 0; k < s.depCount; ++k) os << " " << deps[s.depBegin + k];
    }
    os << "\n";
  }
  return os.str();
}

}  // namespace loom::sched
