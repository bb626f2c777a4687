// UCX transport setup and teardown (the transport's constructor, init, destructor). Collective: a
// rank with UCX peers makes its context and worker; all ranks gather the lengths of the packed
// worker addresses, then the addresses (padded to the longest), through loom's bootstrap; each rank
// creates one endpoint per peer; a last round agrees on the outcome, so a rank whose peer failed
// names it instead of waiting for a timeout. UCX reads its own configuration from the environment
// (UCX_TLS, UCX_NET_DEVICES, UCX_RNDV_THRESH ... pass through).
#include <sched.h>
#include <sys/eventfd.h>
#include <ucs/debug/log_def.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "core/agree.h"
#include "core/log.h"
#include "core/params.h"
#include "transports/ucx/transport.h"

namespace loom::transport {
namespace {

using ucx::UcxTransport;
using ucx::Worker;

thread_local int t_quiet = 0;

ucs_log_func_rc_t logToLoom(const char* file, unsigned line, const char* function,
                            ucs_log_level_t level, const ucs_log_component_config_t* comp,
                            const char* message, va_list ap) {
  char text[512];
  va_list copy;
  va_copy(copy, ap);
  std::vsnprintf(text, sizeof text, message, copy);
  va_end(copy);
  const char* base = std::strrchr(file, '/');
  base = base != nullptr ? base + 1 : file;
  if (t_quiet > 0)
    LOOM_TRACE(NET, "ucx (expected): ", text, " (", base, ":", line, ")");
  else if (level <= UCS_LOG_LEVEL_WARN)
    LOOM_WARN(NET, "ucx: ", text, " (", base, ":", line, ")");
  else if (level <= UCS_LOG_LEVEL_INFO)
    LOOM_INFO(NET, "ucx: ", text, " (", base, ":", line, ")");
  else
    LOOM_TRACE(NET, "ucx: ", text, " (", base, ":", line, ")");
  return UCS_LOG_FUNC_RC_STOP;
}

Status ucxError(const char* what, ucs_status_t st) {
  return systemError("ucx: ", what, " failed: ", ucs_status_string(st));
}

Status makeContext(uint64_t features, int nranks, bool noZcopy, ucp_context_h* out) {
  ucp_config_t* cfg = nullptr;
  ucs_status_t st = ucp_config_read(nullptr, nullptr, &cfg);
  if (st != UCS_OK) return ucxError("ucp_config_read (check the UCX_* environment)", st);
  // LOOM_UCX_TCP_ZCOPY=0: UCX 1.13's tcp transport can complete a zero-copy send twice when the
  // peer dies, and asserts (uct_iface.h "comp->count > 0"), killing a survivor; eager sends by
  // copy avoid it (ucx_fault_test: 5 of 16 runs aborted with zero copy, none without).
  if (noZcopy) ucp_config_modify(cfg, "ZCOPY_THRESH", "inf");
  ucp_params_t p{};
  p.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS |
                 UCP_PARAM_FIELD_MT_WORKERS_SHARED | UCP_PARAM_FIELD_NAME;
  p.features = features;
  p.estimated_num_eps = static_cast<size_t>(nranks);
  p.mt_workers_shared = 0;
  p.name = "loom";
  st = ucp_init(&p, cfg, out);
  ucp_config_release(cfg);
  if (st != UCS_OK) return ucxError("ucp_init", st);
  return Status();
}

Status makeWorker(int nranks, std::unique_ptr<Worker>* out, std::string* address) {
  auto w = std::make_unique<Worker>();
  const bool noZcopy = params::ucxTcpZcopy() == 0 && !ucx::seesRdma(nullptr);
  LOOM_CHECK(makeContext(UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP, nranks, noZcopy, &w->context));
  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;  // one thread at a time (init, stream, caller)
  ucs_status_t st = ucp_worker_create(w->context, &wp, &w->worker);
  if (st != UCS_OK) return ucxError("ucp_worker_create", st);
  ucp_address_t* addr = nullptr;
  size_t len = 0;
  st = ucp_worker_get_address(w->worker, &addr, &len);
  if (st != UCS_OK) return ucxError("ucp_worker_get_address", st);
  address->assign(reinterpret_cast<const char*>(addr), len);
  ucp_worker_release_address(w->worker, addr);
  *out = std::move(w);
  return Status();
}

struct LenSlot {
  uint32_t bytes;
  uint32_t ok;
};

Status setup(const SetupArgs& a, std::unique_ptr<Transport>* out) {
  ucx::routeUcxLog();
  std::unique_ptr<Worker> w;
  std::string addr;
  Status local;
  if (!a.peers.empty()) local = makeWorker(a.nranks, &w, &addr);
  if (!local.ok()) LOOM_WARN(NET, "ucx setup on rank ", a.rank, ": ", local.message());
  std::vector<LenSlot> lens(a.nranks);
  lens[a.rank] = LenSlot{static_cast<uint32_t>(addr.size()), local.ok() ? 1u : 0u};
  Status g = a.allGather(lens.data(), sizeof(LenSlot));
  if (!g.ok()) return Status(g.code(), strCat("ucx setup on rank ", a.rank, ": ", g.message()));
  size_t maxLen = 0;
  for (const LenSlot& l : lens) maxLen = std::max<size_t>(maxLen, l.bytes);
  std::vector<char> all(maxLen * a.nranks + 1);
  std::memcpy(all.data() + maxLen * a.rank, addr.data(), addr.size());
  if (maxLen > 0) {
    g = a.allGather(all.data(), maxLen);
    if (!g.ok()) return Status(g.code(), strCat("ucx setup on rank ", a.rank, ": ", g.message()));
  }
  std::vector<UcxTransport::PeerConfig> peers;
  for (int p : a.peers) {
    if (!lens[p].ok && local.ok())
      local = remoteError("ucx setup failed on peer ", a.ids[p].describe(), "; see its log");
    else if (lens[p].bytes == 0 && local.ok())
      local = invalidUsage("ucx setup on rank ", a.rank, ": peer ", a.ids[p].describe(),
                           " does not use ucx towards this rank");
    peers.push_back({p, a.ids[p], std::string(all.data() + maxLen * p, lens[p].bytes)});
  }
  auto t = std::make_unique<UcxTransport>(a.rank, a.ids[a.rank], a.nranks, std::move(w));
  if (local.ok()) local = t->init(peers);
  LOOM_CHECK(agreeOnOutcome(a.allGather, a.rank, a.nranks, a.ids, local, "ucx setup", a.abortFlag));
  LOOM_INFO(NET, "ucx transport on rank ", a.rank, ": ", peers.size(), " peers, worker address ",
            addr.size(), " bytes");
  *out = std::move(t);
  return Status();
}

}  // namespace

namespace ucx {

Worker::~Worker() {
  if (worker != nullptr) ucp_worker_destroy(worker);
  if (context != nullptr) ucp_cleanup(context);
}

UcxTransport::UcxTransport(int rank, PeerIdentity self, int nranks, std::unique_ptr<Worker> w)
    : rank_(rank), nranks_(nranks), self_(std::move(self)), w_(std::move(w)), index_(nranks, -1) {}

UcxTransport::~UcxTransport() {
  regs_.reset();      // before the context goes (with the Worker)
  bool busy = false;  // operations still posted: an aborted or failed call
  for (const Peer& p : peers_) busy = busy || !p.sends.empty() || !p.recvs.empty();
  if (anyFailed_ || !error_.ok() || busy) {
    // After a peer failure UCX must not be progressed again (drive()), and UCX 1.13 asserts when
    // a worker is destroyed with requests it cannot cancel (sends to a dead or absent peer): the
    // worker and context are left to the process's end.
    LOOM_INFO(NET, "ucx transport on rank ", rank_,
              ": failed or aborted; the UCX worker is not torn down (UCX 1.13 may abort)");
    (void)w_.release();
    return;
  }
  closeEndpoints();
}

Status UcxTransport::init(const std::vector<PeerConfig>& peers) {
  spinUs_ = params::spinUs();
  wakeFd_.reset(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wakeFd_.valid()) return errnoStatus("ucx transport: eventfd", errno);
  if (w_ == nullptr) {
    if (!peers.empty()) return internalError("ucx transport: peers but no worker");
    return Status();  // a rank without UCX peers: wait() and wake() only
  }
  regs_ = std::make_unique<RegCache>(
      w_->context, static_cast<size_t>(std::max<int64_t>(params::ucxRegCacheEntries(), 0)),
      static_cast<uint64_t>(std::max<int64_t>(params::ucxRegMinBytes(), 1)));
  ucs_status_t st = ucp_worker_get_efd(w_->worker, &efd_);
  if (st != UCS_OK) {
    efd_ = -1;
    LOOM_WARN(NET, "ucx transport on rank ", rank_, ": no worker event fd (", ucs_status_string(st),
              "); idle waits poll every millisecond");
  }
  for (const PeerConfig& pc : peers) {
    index_[pc.rank] = static_cast<int>(peers_.size());
    peers_.emplace_back();
    Peer& p = peers_.back();
    p.rank = pc.rank;
    p.id = pc.id;
    p.self = this;
    ucp_ep_params_t ep{};
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                    UCP_EP_PARAM_FIELD_ERR_HANDLER;
    ep.address = reinterpret_cast<const ucp_address_t*>(pc.address.data());
    ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    ep.err_handler.cb = &UcxTransport::onEpError;
    ep.err_handler.arg = &p;
    {
      QuietUcxLog quiet;  // UCX logs an error for the try below when it cannot handle failures
      st = ucp_ep_create(w_->worker, &ep, &p.ep);
    }
    if (st == UCS_ERR_UNREACHABLE) {
      // UCX 1.13 offers peer failure handling only with a transport that can check the peer
      // (tcp, ib); its shared-memory transports alone (UCX_TLS=sm) cannot. Such a peer is on
      // this host, and checkPeers() names it by its pid when it dies.
      ep.field_mask &= ~(UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER);
      st = ucp_ep_create(w_->worker, &ep, &p.ep);
      p.errHandling = false;
      if (st == UCS_OK)
        LOOM_INFO(NET, "ucx transport on rank ", rank_, ": no peer failure handling towards ",
                  pc.id.describe(), " with these UCX transports; dead peers found by pid");
    }
    if (st != UCS_OK) {
      p.ep = nullptr;
      return remoteError("ucx setup on rank ", rank_, ": cannot create an endpoint to peer ",
                         pc.id.describe(), ": ", ucs_status_string(st));
    }
  }
  return Status();
}

void UcxTransport::closeEndpoints() {
  if (w_ == nullptr) return;
  // Receives still posted (an operation that failed or was aborted) are cancelled; their
  // callbacks run during the progress below, while the Ops are still alive.
  for (Peer& p : peers_)
    for (Op& op : p.recvs)
      if (op.ucxReq != nullptr) ucp_request_cancel(w_->worker, op.ucxReq);
  // Flush and close every endpoint, so sends that completed locally reach their peers even when
  // this rank leaves first; a dead peer's endpoint fails its flush (bounded by a deadline).
  std::vector<ucs_status_ptr_t> pending;
  for (Peer& p : peers_) {
    if (p.ep == nullptr) continue;
    ucp_request_param_t prm{};
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    prm.flags = p.failed != UCS_OK && p.errHandling ? UCP_EP_CLOSE_FLAG_FORCE : 0;
    ucs_status_ptr_t r = ucp_ep_close_nbx(p.ep, &prm);
    if (r != nullptr && !UCS_PTR_IS_ERR(r)) pending.push_back(r);
    p.ep = nullptr;
  }
  using Clock = std::chrono::steady_clock;
  const auto end = Clock::now() + std::chrono::seconds(5);
  while (!pending.empty() && Clock::now() < end && !anyFailed_) {
    ucp_worker_progress(w_->worker);
    for (size_t i = 0; i < pending.size();) {
      if (ucp_request_check_status(pending[i]) != UCS_INPROGRESS) {
        ucp_request_free(pending[i]);
        pending[i] = pending.back();
        pending.pop_back();
      } else {
        ++i;
      }
    }
    if (!pending.empty()) sched_yield();
  }
  drive();
  if (!pending.empty())
    LOOM_INFO(NET, "ucx transport on rank ", rank_, ": ", pending.size(),
              " endpoints did not finish closing in 5 s");
}

QuietUcxLog::QuietUcxLog() { ++t_quiet; }
QuietUcxLog::~QuietUcxLog() { --t_quiet; }

void routeUcxLog() {
  static std::once_flag once;
  std::call_once(once, [] { ucs_log_push_handler(&logToLoom); });
}

bool seesRdma(std::string* what) {
  static std::once_flag once;
  static bool rdma = false;
  static std::string found;
  std::call_once(once, [] {
    routeUcxLog();
    ucp_context_h ctx = nullptr;
    Status s = makeContext(UCP_FEATURE_TAG, 1, false, &ctx);
    if (!s.ok()) {
      found = s.message();
      return;
    }
    char* buf = nullptr;
    size_t len = 0;
    FILE* f = open_memstream(&buf, &len);
    if (f != nullptr) {
      ucp_context_print_info(ctx, f);
      std::fclose(f);
      // Lines "#      resource 3  :  md 2  dev 3  flags -- rc_mlx5/mlx5_0:1".
      std::string text(buf, len);
      std::free(buf);
      for (size_t at = text.find(" -- "); at != std::string::npos; at = text.find(" -- ", at + 4)) {
        std::string tl = text.substr(at + 4, text.find_first_of("/\n", at + 4) - at - 4);
        if (tl.rfind("rc", 0) == 0 || tl.rfind("ud", 0) == 0 || tl.rfind("dc", 0) == 0) {
          rdma = true;
          found += (found.empty() ? "" : ",") + tl;
        }
      }
    }
    ucp_cleanup(ctx);
  });
  if (what != nullptr) *what = found;
  return rdma;
}

}  // namespace ucx

Status createUcxTransport(const SetupArgs& args, std::unique_ptr<Transport>* out) {
  if (out == nullptr) return invalidArgument("createUcxTransport: out is NULL");
  if (args.rank < 0 || args.rank >= args.nranks ||
      static_cast<int>(args.ids.size()) != args.nranks || !args.allGather) {
    return invalidArgument("createUcxTransport: rank ", args.rank, ", nranks ", args.nranks, ", ",
                           args.ids.size(), " identities or allGather missing");
  }
  for (int p : args.peers)
    if (p < 0 || p >= args.nranks || p == args.rank)
      return invalidArgument("createUcxTransport: bad peer ", p, " on rank ", args.rank);
  return setup(args, out);
}

}  // namespace loom::transport
