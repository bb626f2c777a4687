// In-memory checker. Every rank's schedule runs in one thread, ready steps in a seeded random
// order. Sends are rendezvous: the source bytes are read only when the matching receive runs, and
// a step that depends on a send waits until then. That is the strictest transport there is, so a
// schedule that forgets a dependency or relies on buffering shows up as a wrong result or deadlock.
#include "sched/checker.h"

#include <cstring>
#include <deque>
#include <random>

#include "kernels/reduce.h"

namespace loom::sched {
namespace {

struct RankState {
  std::vector<uint8_t> done;    // per step
  std::vector<uint8_t> posted;  // sends waiting for their receive
  std::vector<uint32_t> depsLeft;
  size_t finished = 0;
};

struct Sim {
  MemoryRun* run;
  int p;
  std::vector<RankState> st;
  std::vector<std::vector<uint8_t>> scratch;
  // Per (src, dst): posted send step indices in order; per (dst, src): recv step indices in order.
  std::vector<std::deque<int>> sendQ, recvQ;
  std::vector<std::deque<int>> sendOrder;  // per (src, dst): send steps not yet posted, in order
  // Per rank: HostAllReduce steps in order; the front one, once posted, waits for every rank's.
  std::vector<std::deque<int>> hostQ;

  uint8_t* ptr(int r, const BufRef& b) { return run->buffers[r][b.buf] + b.offset; }

  Status bounds(int r, int i, const BufRef& b, uint64_t bytes) {
    const auto& sizes = run->bufferBytes[r];
    if (b.buf >= sizes.size() || b.buf >= run->buffers[r].size())
      return internalError("rank ", r, " step ", i, ": buffer slot ", b.buf, " does not exist");
    if (b.offset + bytes > sizes[b.buf])
      return internalError("rank ", r, " step ", i, ": bytes [", b.offset, ", ", b.offset + bytes,
                           ") outside slot ", b.buf, " of ", sizes[b.buf], " bytes");
    if (bytes > 0 && run->buffers[r][b.buf] == nullptr)
      return internalError("rank ", r, " step ", i, ": slot ", b.buf, " is null");
    return Status();
  }

  Status checkStep(int r, int i) {
    const Step& s = run->schedules[r].steps[i];
    bool readsSrc = s.op == OpKind::kSend || s.op == OpKind::kRecvReduce || s.op == OpKind::kCopy ||
                    s.op == OpKind::kReduce || s.op == OpKind::kHostAllReduce;
    bool writesDst = s.op != OpKind::kSend;
    if (readsSrc) LOOM_CHECK(bounds(r, i, s.src, s.bytes));
    if (writesDst) LOOM_CHECK(bounds(r, i, s.dst, s.bytes));
    bool net = s.op == OpKind::kSend || s.op == OpKind::kRecv || s.op == OpKind::kRecvReduce;
    if (net && (s.peer < 0 || s.peer >= p || s.peer == r))
      return internalError("rank ", r, " step ", i, ": bad peer ", s.peer);
    size_t es = dtypeSize(run->dtype);
    if ((s.op == OpKind::kRecvReduce || s.op == OpKind::kReduce ||
         s.op == OpKind::kHostAllReduce) &&
        s.bytes % es != 0)
      return internalError("rank ", r, " step ", i, ": reduce of ", s.bytes,
                           " bytes is not a whole number of elements");
    for (uint32_t k = 0; k < s.depCount; ++k) {
      if (run->schedules[r].deps[s.depBegin + k] >= static_cast<uint32_t>(i))
        return internalError("rank ", r, " step ", i, ": depends on a later step");
    }
    return Status();
  }

  void finish(int r, int i) {
    st[r].done[i] = 1;
    ++st[r].finished;
  }

  // Rank r's next HostAllReduce step is posted; when every rank's is, all run at once: each rank's
  // dst = all ranks' src reduced in rank order (read before any is written: in place is allowed).
  Status hostStep(int r, int i, bool* did) {
    if (hostQ[r].empty() || hostQ[r].front() != i) return Status();
    st[r].posted[i] = 1;
    *did = true;
    const uint64_t bytes = run->schedules[r].steps[i].bytes;
    for (int q = 0; q < p; ++q) {
      if (hostQ[q].empty() || !st[q].posted[hostQ[q].front()]) return Status();
      const uint64_t b = run->schedules[q].steps[hostQ[q].front()].bytes;
      if (b != bytes)
        return internalError("rank ", q, " step ", hostQ[q].front(), " host-reduces ", b,
                             " bytes but rank ", r, " step ", i, " ", bytes);
    }
    std::vector<uint8_t> sum;
    for (int q = 0; q < p; ++q) {
      const uint8_t* in = ptr(q, run->schedules[q].steps[hostQ[q].front()].src);
      if (q == 0) {
        sum.assign(in, in + bytes);
      } else {
        kernels::reduceScalar(sum.data(), sum.data(), in, bytes / dtypeSize(run->dtype), run->dtype,
                              run->op);
      }
    }
    for (int q = 0; q < p; ++q) {
      const int k = hostQ[q].front();
      hostQ[q].pop_front();
      if (bytes > 0) std::memcpy(ptr(q, run->schedules[q].steps[k].dst), sum.data(), bytes);
      st[q].posted[k] = 0;
      finish(q, k);
    }
    return Status();
  }

  // Runs one step if possible; returns true if it did something.
  Status tryStep(int r, int i, bool* did) {
    *did = false;
    const Schedule& sc = run->schedules[r];
    const Step& s = sc.steps[i];
    if (st[r].done[i] || st[r].posted[i]) return Status();
    for (uint32_t k = 0; k < s.depCount; ++k)
      if (!st[r].done[sc.deps[s.depBegin + k]]) return Status();
    switch (s.op) {
      case OpKind::kSend: {
        // Sends to one peer are posted in schedule order (as the Executor does).
        auto& order = sendOrder[r * p + s.peer];
        if (order.empty() || order.front() != i) return Status();
        order.pop_front();
        st[r].posted[i] = 1;
        sendQ[r * p + s.peer].push_back(i);
        *did = true;
        return Status();
      }
      case OpKind::kHostAllReduce:
        return hostStep(r, i, did);
      case OpKind::kCopy:
        std::memmove(ptr(r, s.dst), ptr(r, s.src), s.bytes);
        break;
      case OpKind::kReduce:
        kernels::reduceScalar(ptr(r, s.dst), ptr(r, s.dst), ptr(r, s.src),
                              s.bytes / dtypeSize(run->dtype), run->dtype, run->op);
        break;
      case OpKind::kRecv:
      case OpKind::kRecvReduce: {
        // Receives from one peer are matched in schedule order.
        auto& rq = recvQ[r * p + s.peer];
        if (rq.empty() || rq.front() != i) return Status();
        auto& sq = sendQ[s.peer * p + r];
        if (sq.empty()) return Status();
        int si = sq.front();
        const Step& ss = run->schedules[s.peer].steps[si];
        if (ss.bytes != s.bytes)
          return internalError("rank ", s.peer, " step ", si, " sends ", ss.bytes,
                               " bytes but rank ", r, " step ", i, " receives ", s.bytes);
        const uint8_t* in = ptr(s.peer, ss.src);
        if (s.op == OpKind::kRecv) {
          std::memmove(ptr(r, s.dst), in, s.bytes);
        } else {
          std::vector<uint8_t> tmp(in, in + s.bytes);  // the sender's region may alias nothing here
          kernels::reduceScalar(ptr(r, s.dst), ptr(r, s.src), tmp.data(),
                                s.bytes / dtypeSize(run->dtype), run->dtype, run->op);
        }
        sq.pop_front();
        rq.pop_front();
        st[s.peer].posted[si] = 0;
        finish(s.peer, si);
        break;
      }
    }
    finish(r, i);
    *did = true;
    return Status();
  }
};

}  // namespace

Status runInMemory(MemoryRun* run) {
  Sim sim;
  sim.run = run;
  sim.p = static_cast<int>(run->schedules.size());
  const int p = sim.p;
  if (run->buffers.size() != static_cast<size_t>(p) ||
      run->bufferBytes.size() != static_cast<size_t>(p))
    return invalidArgument("runInMemory: buffers/bufferBytes need one entry per rank");
  sim.st.resize(p);
  sim.scratch.resize(p);
  sim.sendQ.resize(static_cast<size_t>(p) * p);
  sim.recvQ.resize(static_cast<size_t>(p) * p);
  sim.sendOrder.resize(static_cast<size_t>(p) * p);
  sim.hostQ.resize(p);
  for (int r = 0; r < p; ++r) {
    const Schedule& sc = run->schedules[r];
    auto& bufs = run->buffers[r];
    auto& sizes = run->bufferBytes[r];
    if (bufs.size() < sc.numBuffers) bufs.resize(sc.numBuffers, nullptr);
    if (sizes.size() < sc.numBuffers) sizes.resize(sc.numBuffers, 0);
    if (bufs[kBufScratch] == nullptr && sc.scratchBytes > 0) {
      sim.scratch[r].assign(sc.scratchBytes, 0xA5);
      bufs[kBufScratch] = sim.scratch[r].data();
      sizes[kBufScratch] = sc.scratchBytes;
    }
    sim.st[r].done.assign(sc.steps.size(), 0);
    sim.st[r].posted.assign(sc.steps.size(), 0);
    for (size_t i = 0; i < sc.steps.size(); ++i) {
      LOOM_CHECK(sim.checkStep(r, static_cast<int>(i)));
      const Step& s = sc.steps[i];
      if (s.op == OpKind::kRecv || s.op == OpKind::kRecvReduce)
        sim.recvQ[r * p + s.peer].push_back(static_cast<int>(i));
      if (s.op == OpKind::kSend) sim.sendOrder[r * p + s.peer].push_back(static_cast<int>(i));
      if (s.op == OpKind::kHostAllReduce) sim.hostQ[r].push_back(static_cast<int>(i));
    }
  }
  std::mt19937 rng(12345);
  std::vector<std::pair<int, int>> order;
  for (;;) {
    order.clear();
    bool allDone = true;
    for (int r = 0; r < p; ++r) {
      if (sim.st[r].finished == run->schedules[r].steps.size()) continue;
      allDone = false;
      for (size_t i = 0; i < run->schedules[r].steps.size(); ++i)
        if (!sim.st[r].done[i]) order.emplace_back(r, static_cast<int>(i));
    }
    if (allDone) return Status();
    std::shuffle(order.begin(), order.end(), rng);
    bool any = false;
    for (auto [r, i] : order) {
      bool did = false;
      LOOM_CHECK(sim.tryStep(r, i, &did));
      any = any || did;
    }
    if (!any) {
      std::string stuck;
      for (int r = 0; r < p; ++r) {
        for (size_t i = 0; i < run->schedules[r].steps.size(); ++i) {
          if (!sim.st[r].done[i]) {
            stuck += strCat(" rank ", r, " step ", i, " (",
                            opKindName(run->schedules[r].steps[i].op), ")");
            break;
          }
        }
      }
      return internalError("schedules deadlock; first unfinished:", stuck);
    }
  }
}

}  // namespace loom::sched
