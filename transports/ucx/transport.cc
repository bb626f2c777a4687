// UCX transport data path (see transport.h for matching, progress and errors).
#include "transports/ucx/transport.h"

#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "core/log.h"
#include "core/params.h"
#include "kernels/reduce.h"

namespace loom::transport::ucx {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

// Calls ucp_worker_progress until it has nothing more to do (bounded, for fairness). Stops for
// good once a peer failed with operations queued to it: UCX 1.13's tcp transport, progressed
// further after such a failure, can complete a failed send twice and abort the process
// (uct_iface.h "comp->count > 0"; about half the runs of ucx_fault_test); the error is reported
// instead and the communicator is unusable, as after any peer failure.
bool UcxTransport::drive() {
  bool any = false;
  for (int i = 0; i < 256 && !anyFailed_ && ucp_worker_progress(w_->worker) != 0; ++i) any = true;
  return any;
}

Capabilities UcxTransport::caps() const {
  Capabilities c;
  c.name = "ucx";
  c.bandwidthGBs = kBandwidthGBs;
  c.latencyUs = kLatencyUs;
  return c;
}

void UcxTransport::onEpError(void* arg, ucp_ep_h ep, ucs_status_t status) {
  auto* p = static_cast<Peer*>(arg);
  if (p->failed == UCS_OK) p->failed = status;
  // A peer we have nothing queued with may simply have left (destroyed its communicator first);
  // only a failure that breaks our operations stops the worker.
  if (!p->sends.empty() || !p->recvs.empty()) p->self->anyFailed_ = true;
  ++p->self->completions_;
}

void UcxTransport::onSend(void* request, ucs_status_t status, void* user) {
  auto* op = static_cast<Op*>(user);
  op->finished = true;
  op->status = status;
  op->ucxReq = nullptr;
  ++op->self->completions_;
  ucp_request_free(request);
}

void UcxTransport::onRecv(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info,
                          void* user) {
  auto* op = static_cast<Op*>(user);
  op->finished = true;
  op->status = status;
  if (info != nullptr) op->info = *info;
  op->ucxReq = nullptr;
  ++op->self->completions_;
  ucp_request_free(request);
}

Status UcxTransport::peerFailed(Peer& p, ucs_status_t st) {
  anyFailed_ = true;
  error_ = remoteError("peer ", p.id.describe(), " failed (ucx: ", ucs_status_string(st), ")");
  LOOM_WARN(NET, error_.message());
  return error_;
}

uint8_t* UcxTransport::takeStaging(uint64_t bytes) {
  auto best = freeStaging_.end();
  for (auto it = freeStaging_.begin(); it != freeStaging_.end(); ++it)
    if (it->bytes >= bytes && (best == freeStaging_.end() || it->bytes < best->bytes)) best = it;
  Staging s;
  if (best != freeStaging_.end()) {
    s = std::move(*best);
    freeStaging_.erase(best);
  } else {
    s.buf.reset(new (std::nothrow) uint8_t[bytes]);
    s.bytes = bytes;
    if (!s.buf) return nullptr;
  }
  usedStaging_.push_back(std::move(s));
  return usedStaging_.back().buf.get();
}

void UcxTransport::giveStaging(uint8_t* buf) {
  for (auto it = usedStaging_.begin(); it != usedStaging_.end(); ++it) {
    if (it->buf.get() != buf) continue;
    uint64_t kept = 0;
    for (const auto& f : freeStaging_) kept += f.bytes;
    if (kept + it->bytes <= kKeepStagingBytes) freeStaging_.push_back(std::move(*it));
    usedStaging_.erase(it);
    return;
  }
}

Status UcxTransport::post(int peer, Request* req) {
  if (!error_.ok()) return error_;
  if (peer < 0 || peer >= nranks_ || index_[peer] < 0)
    return invalidArgument("ucx post: peer ", peer, " is not served by this transport");
  if (req == nullptr) return invalidArgument("ucx post: request is NULL");
  const bool send = req->kind == Request::kSend;
  if (req->bytes > 0 && (send ? req->src == nullptr : req->dst == nullptr))
    return invalidArgument("ucx post: ", send ? "src" : "dst", " is NULL for ", req->bytes,
                           " bytes (peer ", peer, ")");
  if (!send && req->operand != nullptr) {
    if (!validDataType(static_cast<int>(req->dtype)) || !validRedOp(static_cast<int>(req->op)))
      return invalidArgument("ucx post: bad dtype/op for a reducing receive from peer ", peer);
    if (req->bytes % dtypeSize(req->dtype) != 0)
      return invalidArgument("ucx post: reducing receive of ", req->bytes,
                             " bytes is not a whole number of ", dtypeName(req->dtype),
                             " elements (peer ", peer, ")");
  }
  Peer& p = peers_[index_[peer]];
  if (p.failed != UCS_OK) return peerFailed(p, p.failed);
  std::deque<Op>& q = send ? p.sends : p.recvs;
  q.emplace_back();
  Op& op = q.back();
  op.self = this;
  op.req = req;
  op.peer = peer;
  op.recv = !send;
  req->doneBytes = 0;
  req->complete = false;
  return startOp(p, op);
}

Status UcxTransport::startOp(Peer& p, Op& op) {
  Request* req = op.req;
  uint8_t* buf = op.recv ? req->dst : const_cast<uint8_t*>(req->src);
  if (op.recv && req->operand != nullptr && req->bytes > 0) {
    op.staging = takeStaging(req->bytes);
    if (op.staging == nullptr)
      return systemError("ucx: cannot allocate ", req->bytes, " bytes to receive from peer ",
                         p.id.describe());
    buf = op.staging;
  }
  if (req->bytes == 0) buf = nullptr;
  op.reg = regs_->acquire(buf, req->bytes);
  ucp_request_param_t prm{};
  prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  prm.user_data = &op;
  if (op.reg != nullptr) {
    prm.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMH;
    prm.memh = op.reg->memh;
  }
  ucs_status_ptr_t r;
  LOOM_TRACE(NET, "ucx ", op.recv ? "recv from " : "send to ", p.rank, " #",
             op.recv ? p.recvSeq : p.sendSeq, " ", req->bytes, " bytes");
  if (op.recv) {
    // No UCP_OP_ATTR_FIELD_RECV_INFO: UCX 1.13 then always returns a request and reports the
    // received length in the callback (its immediate-completion path left the length 0 here).
    prm.cb.recv = &UcxTransport::onRecv;
    r = ucp_tag_recv_nbx(w_->worker, buf, req->bytes, makeTag(p.rank, p.recvSeq++), ~uint64_t{0},
                         &prm);
  } else {
    prm.cb.send = &UcxTransport::onSend;
    r = ucp_tag_send_nbx(p.ep, buf, req->bytes, makeTag(rank_, p.sendSeq++), &prm);
  }
  if (r == nullptr) {
    op.finished = true;  // completed in place
    op.status = UCS_OK;
    op.info.length = req->bytes;
    ++completions_;
  } else if (UCS_PTR_IS_ERR(r)) {
    op.finished = true;
    op.status = UCS_PTR_STATUS(r);
    ++completions_;
  } else {
    op.ucxReq = r;
  }
  return Status();
}

Status UcxTransport::finishOp(Peer& p, Op& op) {
  Request* req = op.req;
  regs_->release(op.reg);
  op.reg = nullptr;
  if (op.status == UCS_ERR_MESSAGE_TRUNCATED) {
    error_ = invalidUsage("ucx: a message from peer ", p.id.describe(),
                          " is longer than the receive of ", req->bytes,
                          " bytes this rank posted for it");
  } else if (op.status == UCS_ERR_CANCELED && p.failed != UCS_OK) {
    return peerFailed(p, p.failed);
  } else if (op.status != UCS_OK) {
    return peerFailed(p, op.status);
  } else if (op.recv && op.info.length != req->bytes) {
    error_ = invalidUsage("ucx: a message from peer ", p.id.describe(), " has ", op.info.length,
                          " bytes but this rank posted a receive of ", req->bytes, " bytes");
  }
  if (!error_.ok()) {
    LOOM_WARN(NET, error_.message());
    return error_;
  }
  if (op.staging != nullptr) {
    kernels::reduce(req->dst, req->operand, op.staging, req->bytes / dtypeSize(req->dtype),
                    req->dtype, req->op);
    giveStaging(op.staging);
    op.staging = nullptr;
  }
  req->doneBytes = req->bytes;
  req->complete = true;
  return Status();
}

Status UcxTransport::settle(Peer& p, std::deque<Op>& q, bool* moved) {
  while (!q.empty() && q.front().finished) {
    LOOM_CHECK(finishOp(p, q.front()));
    q.pop_front();
    *moved = true;
  }
  if (p.failed != UCS_OK && !q.empty()) return peerFailed(p, p.failed);
  return Status();
}

Status UcxTransport::progress(bool* progressed) {
  *progressed = false;
  if (!error_.ok()) return error_;
  if (w_ == nullptr) return Status();
  drive();
  // Settle when anything finished since the last settle (also ops that finished inside post()).
  bool look = completions_ != settled_;
  settled_ = completions_;
  for (const Peer& p : peers_)
    look = look || (p.failed != UCS_OK && (!p.sends.empty() || !p.recvs.empty()));
  if (!look) return Status();
  for (Peer& p : peers_) {
    LOOM_CHECK(settle(p, p.sends, progressed));
    LOOM_CHECK(settle(p, p.recvs, progressed));
  }
  return Status();
}

Status UcxTransport::wait(int64_t timeoutUs) {
  if (!error_.ok()) return error_;
  const auto start = Clock::now();
  const auto spinEnd = start + std::chrono::microseconds(std::min(spinUs_, timeoutUs));
  // Spin through the worker briefly, yielding: with more ranks than cores the peer we wait for
  // may need this core.
  do {
    if (w_ == nullptr) break;
    if (drive() || completions_ != settled_) return Status();
    sched_yield();
  } while (Clock::now() < spinEnd);
  pollFds_.clear();
  if (!pollable()) {
    pollFds_.push_back({wakeFd_.get(), POLLIN, 0});
  } else if (!armPoll(&pollFds_)) {
    return Status();
  }
  int64_t left =
      timeoutUs -
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
  if (!pollable()) left = std::min<int64_t>(left, 1000);
  timespec ts{std::max<int64_t>(left, 0) / 1000000, (std::max<int64_t>(left, 0) % 1000000) * 1000};
  int rc = ppoll(pollFds_.data(), pollFds_.size(), &ts, nullptr);
  disarmPoll();
  if (rc < 0 && errno != EINTR) return errnoStatus("ucx transport: poll", errno);
  return Status();
}

bool UcxTransport::armPoll(std::vector<pollfd>* fds) {
  if (!error_.ok()) return false;  // progress() reports it
  if (w_ == nullptr) {
    fds->push_back({wakeFd_.get(), POLLIN, 0});
    return true;
  }
  if (drive() || completions_ != settled_) return false;
  if (pollable()) {
    ucs_status_t st = ucp_worker_arm(w_->worker);
    if (st == UCS_ERR_BUSY) return false;  // events arrived: progress first
    if (st != UCS_OK) {
      LOOM_WARN(NET, "ucx transport on rank ", rank_, ": ucp_worker_arm failed (",
                ucs_status_string(st), "); polling every millisecond");
      efd_ = -1;
      return false;
    }
    fds->push_back({efd_, POLLIN, 0});
  } else {
    return false;  // no event fd: the caller keeps polling (wait() sleeps 1 ms at a time)
  }
  fds->push_back({wakeFd_.get(), POLLIN, 0});
  return true;
}

void UcxTransport::disarmPoll() {
  uint64_t v;
  ssize_t k = read(wakeFd_.get(), &v, sizeof(v));
  (void)k;
}

Status UcxTransport::checkPeers() {
  if (!error_.ok()) return error_;
  for (Peer& p : peers_) {
    if (p.sends.empty() && p.recvs.empty()) continue;  // a peer we do not need may have left
    if (p.failed != UCS_OK) return peerFailed(p, p.failed);
    if (p.id.sameHostAs(self_) && processGone(p.id.pid)) {
      anyFailed_ = true;
      error_ = remoteError("peer ", p.id.describe(), " died (process gone)");
      LOOM_WARN(NET, error_.message());
      return error_;
    }
  }
  return Status();
}

void UcxTransport::wake() {
  uint64_t one = 1;
  ssize_t k = write(wakeFd_.get(), &one, sizeof(one));
  (void)k;
}

}  // namespace loom::transport::ucx
