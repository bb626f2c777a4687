#include "sched/executor.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <string>

#include "kernels/reduce.h"

namespace loom::sched {
namespace {

using Clock = std::chrono::steady_clock;

// Network steps to/from one peer in one direction, in schedule order. Steps [0, done) are
// complete, [done, posted) are with the transport (they complete in FIFO order), the rest wait.
struct Lane {
  int peer = -1;
  std::vector<int> steps;
  size_t posted = 0, done = 0;
};

// Per-thread storage reused by every run on that thread, so a small operation allocates nothing.
struct Storage {
  std::vector<uint32_t> depsLeft, outBegin, outEdges, fill;
  std::vector<transport::Request> req;
  std::vector<Lane> lanes;  // [0, lanesUsed) are live
  size_t lanesUsed = 0;
  std::vector<int> laneOf;
  std::vector<int> localReady;
  std::vector<pollfd> pollFds;         // a sleep over several transports
  std::unique_ptr<uint8_t[]> scratch;  // kept between runs when small (kKeepScratchBytes)
  uint64_t scratchBytes = 0;
  bool busy = false;  // a nested run (should not happen) gets its own storage
};

class Run {
 public:
  Run(const Schedule& s, std::vector<uint8_t*>& bufs, DataType dt, RedOp op, const ExecContext& c,
      const CallDesc* call, Storage& st)
      : s_(s),
        bufs_(bufs),
        dt_(dt),
        op_(op),
        ctx_(c),
        call_(call),
        depsLeft_(st.depsLeft),
        outBegin_(st.outBegin),
        outEdges_(st.outEdges),
        fill_(st.fill),
        req_(st.req),
        lanes_(st.lanes),
        lanesUsed_(st.lanesUsed),
        laneOf_(st.laneOf),
        localReady_(st.localReady),
        storage_(st) {}

  Status go();

 private:
  uint8_t* at(const BufRef& b) { return bufs_[b.buf] + b.offset; }
  static bool isNet(OpKind k) {
    return k == OpKind::kSend || k == OpKind::kRecv || k == OpKind::kRecvReduce;
  }
  void complete(int i);
  double sinceStartUs() const {
    return std::chrono::duration<double, std::micro>(Clock::now() - start_).count();
  }
  void writeTrace();
  Status post(int i);
  Status postReady(bool* did);
  Status runLocal(bool* did);
  Status hostAllReduce(const Step& st);
  Status reap(bool* did);
  Status idle(Clock::time_point lastProgress, Clock::time_point* lastPeerCheck);
  std::string waitingFor();

  const Schedule& s_;
  std::vector<uint8_t*>& bufs_;
  DataType dt_;
  RedOp op_;
  const ExecContext& ctx_;
  const CallDesc* call_;
  std::vector<uint32_t>& depsLeft_;
  std::vector<uint32_t>&outBegin_, &outEdges_, &fill_;  // dependents, CSR
  std::vector<transport::Request>& req_;
  std::vector<Lane>& lanes_;  // two per active peer: sends, receives; [0, lanesUsed_) live
  size_t& lanesUsed_;
  std::vector<int>& laneOf_;
  std::vector<int>& localReady_;  // FIFO: [localHead_, size) waiting
  size_t localHead_ = 0;
  Storage& storage_;
  std::unique_ptr<uint8_t[]> scratch_;  // this run's own scratch when too big to keep
  size_t done_ = 0;
  // LOOM_STEP_TRACE only: the run's start and each step's start and end (us since start_).
  Clock::time_point start_;
  std::vector<double> startUs_, endUs_;
};

void Run::complete(int i) {
  ++done_;
  if (ctx_.trace != nullptr) endUs_[i] = sinceStartUs();
  for (uint32_t e = outBegin_[i]; e < outBegin_[i + 1]; ++e) {
    int d = static_cast<int>(outEdges_[e]);
    if (--depsLeft_[d] == 0 && !isNet(s_.steps[d].op)) localReady_.push_back(d);
  }
}

Status Run::post(int i) {
  const Step& st = s_.steps[i];
  transport::Request& r = req_[i];
  r.bytes = st.bytes;
  r.dtype = dt_;
  r.op = op_;
  r.call = call_;
  if (st.op == OpKind::kSend) {
    r.kind = transport::Request::kSend;
    r.src = st.bytes ? at(st.src) : nullptr;
  } else {
    r.kind = transport::Request::kRecv;
    r.dst = st.bytes ? at(st.dst) : nullptr;
    r.operand = st.op == OpKind::kRecvReduce && st.bytes ? at(st.src) : nullptr;
  }
  transport::Transport* t = ctx_.transportOf[st.peer];
  if (t == nullptr) return internalError("no transport to rank ", st.peer);
  if (ctx_.trace != nullptr) startUs_[i] = sinceStartUs();
  return t->post(st.peer, &r);
}

Status Run::postReady(bool* did) {
  for (size_t k = 0; k < lanesUsed_; ++k) {
    Lane& l = lanes_[k];
    while (l.posted < l.steps.size() && depsLeft_[l.steps[l.posted]] == 0) {
      LOOM_CHECK(post(l.steps[l.posted]));
      ++l.posted;
      *did = true;
    }
  }
  return Status();
}

Status Run::runLocal(bool* did) {
  while (localHead_ < localReady_.size()) {
    int i = localReady_[localHead_++];
    const Step& st = s_.steps[i];
    if (ctx_.trace != nullptr) startUs_[i] = sinceStartUs();
    if (st.op == OpKind::kHostAllReduce) {
      LOOM_CHECK(hostAllReduce(st));
    } else if (st.bytes > 0) {
      if (st.op == OpKind::kCopy) {
        if (at(st.dst) != at(st.src)) kernels::copy(at(st.dst), at(st.src), st.bytes);
      } else {
        kernels::reduce(at(st.dst), at(st.dst), at(st.src), st.bytes / dtypeSize(dt_), dt_, op_);
      }
    }
    complete(i);
    *did = true;
  }
  return Status();
}

Status hostAllReduce(const Step& st, uint8_t* const* bufs, DataType dt, RedOp op,
                     const ExecContext& ctx, const CallDesc* call) {
  if (ctx.host == nullptr)
    return internalError("schedule has a hostallreduce step but no transport offers the primitive");
  const uint64_t count = st.bytes / dtypeSize(dt);
  if (count == 0) return ctx.host->allReduce(nullptr, nullptr, 0, dt, op, call);
  return ctx.host->allReduce(bufs[st.src.buf] + st.src.offset, bufs[st.dst.buf] + st.dst.offset,
                             count, dt, op, call);
}

// A schedule that is one HostAllReduce step (the "direct" algorithms) over the user's buffers.
bool isHostOnly(const Schedule& s, const ExecContext& ctx) {
  return s.steps.size() == 1 && s.steps[0].op == OpKind::kHostAllReduce && ctx.trace == nullptr &&
         s.steps[0].src.buf <= kBufRecv && s.steps[0].dst.buf <= kBufRecv;
}

Status Run::hostAllReduce(const Step& st) {
  return sched::hostAllReduce(st, bufs_.data(), dt_, op_, ctx_, call_);
}

Status Run::reap(bool* did) {
  for (auto* t : ctx_.transports) {
    bool moved = false;
    LOOM_CHECK(t->progress(&moved));
    *did = *did || moved;
  }
  for (size_t k = 0; k < lanesUsed_; ++k) {
    Lane& l = lanes_[k];
    while (l.done < l.posted && req_[l.steps[l.done]].complete) {
      complete(l.steps[l.done]);
      ++l.done;
      *did = true;
    }
  }
  return Status();
}

std::string Run::waitingFor() {
  std::string out;
  int last = -1;
  for (size_t k = 0; k < lanesUsed_; ++k) {
    const Lane& l = lanes_[k];
    if (l.done == l.steps.size() || l.peer == last) continue;
    last = l.peer;
    const int p = l.peer;
    if (!out.empty()) out += ", ";
    if (ctx_.ids != nullptr && p < static_cast<int>(ctx_.ids->size()))
      out += (*ctx_.ids)[p].describe();
    else
      out += strCat("rank ", p);
  }
  return out.empty() ? "no peer (local steps blocked)" : out;
}

Status Run::idle(Clock::time_point lastProgress, Clock::time_point* lastPeerCheck) {
  auto now = Clock::now();
  if (ctx_.abortFlag != nullptr && ctx_.abortFlag->load(std::memory_order_relaxed))
    return invalidUsage("operation aborted (loomCommAbort)");
  if (ctx_.revokedFlag != nullptr && ctx_.revokedFlag->load(std::memory_order_relaxed))
    return revokedError("communicator revoked while rank ", ctx_.rank, " waited for ",
                        waitingFor());
  auto stalledUs =
      std::chrono::duration_cast<std::chrono::microseconds>(now - lastProgress).count();
  if (stalledUs > ctx_.timeoutMs * 1000)
    return timeoutError("rank ", ctx_.rank, " waited ", ctx_.timeoutMs, " ms without progress for ",
                        waitingFor());
  // No spinning here: the transports' wait() spins briefly (yielding the CPU) and then sleeps,
  // which is what lets 8 ranks progress on 2 cores.
  if (now - *lastPeerCheck > std::chrono::milliseconds(ctx_.peerCheckMs)) {
    *lastPeerCheck = now;
    for (auto* t : ctx_.transports) LOOM_CHECK(t->checkPeers());
  }
  constexpr int64_t kSliceUs = 20000;
  if (ctx_.transports.size() == 1) return ctx_.transports[0]->wait(kSliceUs);
  // Several transports (shm on this host, tcp to others): spin through progress() for spinUs,
  // then sleep in one poll over all of them, so a message on either wakes us at once.
  if (stalledUs < ctx_.spinUs) {
    sched_yield();
    return Status();
  }
  std::vector<pollfd>& fds = storage_.pollFds;
  fds.clear();
  size_t armed = 0;
  bool sleep = true;
  for (auto* t : ctx_.transports) {
    if (!t->armPoll(&fds)) {
      sleep = false;
      break;
    }
    ++armed;
  }
  Status st;
  if (sleep) {
    timespec ts{0, kSliceUs * 1000};
    if (ppoll(fds.data(), fds.size(), &ts, nullptr) < 0 && errno != EINTR)
      st = errnoStatus(strCat("executor: poll over ", fds.size(), " descriptors"), errno);
  }
  for (size_t k = 0; k < armed; ++k) ctx_.transports[k]->disarmPoll();
  return st;
}

void Run::writeTrace() {
  std::string out;
  const uint64_t call = ctx_.trace->nextCall();
  for (size_t i = 0; i < s_.steps.size(); ++i) {
    const Step& st = s_.steps[i];
    out += stepTraceLine(ctx_.trace->rank(), call, i, st.op, st.peer, st.bytes, startUs_[i],
                         endUs_[i]);
  }
  ctx_.trace->write(out);
}

Status Run::go() {
  const size_t n = s_.steps.size();
  if (n == 0) return Status();
  if (ctx_.trace != nullptr) {
    start_ = Clock::now();
    startUs_.assign(n, 0.0);
    endUs_.assign(n, 0.0);
  }
  if (bufs_.size() < s_.numBuffers) bufs_.resize(s_.numBuffers, nullptr);
  if (s_.scratchBytes > 0 && bufs_[kBufScratch] == nullptr) {
    // Small scratch is kept per thread, so small operations do not allocate on every call.
    constexpr uint64_t kKeepScratchBytes = 4 << 20;
    const bool keep = s_.scratchBytes <= kKeepScratchBytes;
    if (keep && storage_.scratchBytes >= s_.scratchBytes) {
      bufs_[kBufScratch] = storage_.scratch.get();
    } else {
      std::unique_ptr<uint8_t[]> mem(new (std::nothrow) uint8_t[s_.scratchBytes]);
      if (!mem) return systemError("cannot allocate ", s_.scratchBytes, " bytes of scratch");
      bufs_[kBufScratch] = mem.get();
      if (keep) {
        storage_.scratch = std::move(mem);
        storage_.scratchBytes = s_.scratchBytes;
      } else {
        scratch_ = std::move(mem);
      }
    }
  }
  depsLeft_.assign(n, 0);
  outBegin_.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    const Step& st = s_.steps[i];
    depsLeft_[i] = st.depCount;
    for (uint32_t k = 0; k < st.depCount; ++k) ++outBegin_[s_.deps[st.depBegin + k] + 1];
  }
  for (size_t i = 0; i < n; ++i) outBegin_[i + 1] += outBegin_[i];
  outEdges_.resize(outBegin_[n]);
  fill_.assign(outBegin_.begin(), outBegin_.end() - 1);
  for (size_t i = 0; i < n; ++i) {
    const Step& st = s_.steps[i];
    for (uint32_t k = 0; k < st.depCount; ++k) outEdges_[fill_[s_.deps[st.depBegin + k]]++] = i;
  }
  req_.assign(n, transport::Request());
  localReady_.clear();
  lanesUsed_ = 0;
  const size_t p = ctx_.transportOf.size();
  if (laneOf_.size() < p) laneOf_.resize(p, -1);
  for (size_t i = 0; i < n; ++i) {
    const Step& st = s_.steps[i];
    if (isNet(st.op)) {
      if (st.peer < 0 || st.peer >= static_cast<int>(p) || st.peer == ctx_.rank) {
        std::fill(laneOf_.begin(), laneOf_.end(), -1);
        return internalError("schedule step ", i, " has bad peer ", st.peer);
      }
      if (laneOf_[st.peer] < 0) {
        laneOf_[st.peer] = static_cast<int>(lanesUsed_);
        if (lanes_.size() < lanesUsed_ + 2) lanes_.resize(lanesUsed_ + 2);
        for (int d = 0; d < 2; ++d) {
          Lane& l = lanes_[lanesUsed_ + d];
          l.peer = st.peer;
          l.steps.clear();
          l.posted = l.done = 0;
        }
        lanesUsed_ += 2;
      }
      lanes_[laneOf_[st.peer] + (st.op == OpKind::kSend ? 0 : 1)].steps.push_back(
          static_cast<int>(i));
    } else if (depsLeft_[i] == 0) {
      localReady_.push_back(static_cast<int>(i));
    }
  }
  for (size_t k = 0; k < lanesUsed_; k += 2) laneOf_[lanes_[k].peer] = -1;
  auto lastProgress = Clock::now();
  auto lastPeerCheck = lastProgress;
  while (done_ < n) {
    bool did = false;
    LOOM_CHECK(postReady(&did));
    LOOM_CHECK(runLocal(&did));
    LOOM_CHECK(reap(&did));
    if (did) {
      lastProgress = Clock::now();
      continue;
    }
    LOOM_CHECK(idle(lastProgress, &lastPeerCheck));
  }
  if (ctx_.trace != nullptr) writeTrace();
  return Status();
}

}  // namespace

std::string stepTraceLine(int rank, uint64_t call, size_t step, OpKind op, int peer, uint64_t bytes,
                          double startUs, double endUs) {
  char line[160];
  std::snprintf(line, sizeof line, "%d %" PRIu64 " %zu %s %d %" PRIu64 " %.1f %.1f\n", rank, call,
                step, opKindName(op), peer, bytes, startUs, endUs);
  return line;
}

Status StepTrace::open(const std::string& path, int rank, int nranks,
                       std::unique_ptr<StepTrace>* out) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return invalidArgument("LOOM_STEP_TRACE: cannot open '", path, "': ", std::strerror(errno));
  out->reset(new StepTrace(fd, rank));
  (*out)->write(
      strCat("# loom step trace, rank ", rank, " of ", nranks, ": ", kStepTraceFields, "\n"));
  return Status();
}

StepTrace::~StepTrace() { ::close(fd_); }

void StepTrace::write(const std::string& lines) {
  // A trace is a diagnostic: a short or failed write (disk full) drops lines, never the run.
  ssize_t w = ::write(fd_, lines.data(), lines.size());
  (void)w;
}

Status execute(const Schedule& sched, std::vector<uint8_t*> buffers, DataType dtype, RedOp op,
               const ExecContext& ctx, const CallDesc* call) {
  // The one-step schedule of a "direct" algorithm: nothing to pipeline, so no run is set up.
  if (isHostOnly(sched, ctx) && buffers.size() >= 2)
    return hostAllReduce(sched.steps[0], buffers.data(), dtype, op, ctx, call);
  thread_local Storage tls;
  if (tls.busy) {
    Storage own;
    own.busy = true;
    return Run(sched, buffers, dtype, op, ctx, call, own).go();
  }
  tls.busy = true;
  Status s = Run(sched, buffers, dtype, op, ctx, call, tls).go();
  tls.busy = false;
  return s;
}

Status execute(const Schedule& sched, const void* send, void* recv, DataType dtype, RedOp op,
               const ExecContext& ctx, const CallDesc* call) {
  uint8_t* bufs[2] = {const_cast<uint8_t*>(static_cast<const uint8_t*>(send)),
                      static_cast<uint8_t*>(recv)};
  if (isHostOnly(sched, ctx)) return hostAllReduce(sched.steps[0], bufs, dtype, op, ctx, call);
  return execute(sched, std::vector<uint8_t*>{bufs[0], bufs[1], nullptr}, dtype, op, ctx, call);
}

}  // namespace loom::sched
