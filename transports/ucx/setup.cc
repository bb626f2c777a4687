// UCX transport setup. Collective: a rank with UCX peers makes its context and worker; all ranks
// gather the lengths of the packed worker addresses, then the addresses (padded to the longest),
// through loom's bootstrap; each rank creates one endpoint per peer; a last round agrees on the
// outcome, so a rank whose peer failed names it instead of waiting for a timeout. UCX reads its own
// configuration from the environment (UCX_TLS, UCX_NET_DEVICES, UCX_RNDV_THRESH ... pass through).
#include <ucs/debug/log_def.h>

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
  wp.thread_mode = UCS_THREAD_MODE_SINGLE;
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
  LOOM_CHECK(agreeOnOutcome(a.allGather, a.rank, a.nranks, a.ids, local, "ucx setup",
                            a.abortFlag));
  LOOM_INFO(NET, "ucx transport on rank ", a.rank, ": ", peers.size(), " peers, worker address ",
            addr.size(), " bytes");
  *out = std::move(t);
  return Status();
}

}  // namespace

namespace ucx {

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
