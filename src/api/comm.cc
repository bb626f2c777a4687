#include "api/comm.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "algo/registry.h"
#include "api/device_staging.h"
#include "core/agree.h"
#include "core/log.h"
#include "core/params.h"
#include "kernels/reduce.h"
#include "sched/executor.h"
#include "transports/policy.h"

namespace loom::api {

bool OpDesc::reduces() const {
  return coll == sched::CollType::kAllReduce || coll == sched::CollType::kReduce ||
         coll == sched::CollType::kReduceScatter;
}

namespace {

std::mutex& registryMu() {
  static std::mutex m;
  return m;
}
std::set<const loomComm*>& liveComms() {
  static std::set<const loomComm*> s;
  return s;
}

// Which transport carries each pair is decided in one place, transports/policy.h.
Status connectTransports(const CommOptions& opt, loomComm* c) {
  std::string forced = !opt.transport.empty() ? opt.transport : params::transport();
  bootstrap::Bootstrap* bs = c->bootstrap.get();
  auto allGather = [bs](void* data, size_t bytes) { return bs->allGather(data, bytes); };
  transport::Selection sel;
  LOOM_CHECK(transport::selectTransports(forced, c->rank, c->ids, allGather, &sel));
  std::vector<int> shmPeers, tcpPeers, ucxPeers;
  std::vector<int>* byKind[] = {&shmPeers, &tcpPeers, &ucxPeers};  // indexed by transport::Kind
  for (int q = 0; q < c->nranks; ++q)
    if (q != c->rank) byKind[static_cast<int>(sel.kindOf[q])]->push_back(q);
  c->ucxRdma = sel.ucxRdma;
  transport::SetupArgs args;
  args.rank = c->rank;
  args.nranks = c->nranks;
  args.ids = c->ids;
  args.allGather = allGather;
  args.commTag = c->commTag;
  args.timeoutMs = c->timeoutMs;
  args.abortFlag = &c->abortFlag;
  args.revokedFlag = &c->revoked;
  args.peers = shmPeers;
  LOOM_CHECK(transport::createShmTransport(args, &c->shm));
  args.peers = tcpPeers;
  LOOM_CHECK(transport::createTcpTransport(args, &c->tcp));
  if (sel.anyUcx) {
    args.peers = ucxPeers;
    LOOM_CHECK(transport::createUcxTransport(args, &c->ucx));
  }
  c->transportOf.assign(c->nranks, nullptr);
  for (int q : shmPeers) c->transportOf[q] = c->shm.get();
  for (int q : tcpPeers) c->transportOf[q] = c->tcp.get();
  for (int q : ucxPeers) c->transportOf[q] = c->ucx.get();
  if (!shmPeers.empty()) c->transports.push_back(c->shm.get());
  if (!tcpPeers.empty()) c->transports.push_back(c->tcp.get());
  if (!ucxPeers.empty()) c->transports.push_back(c->ucx.get());
  LOOM_INFO(INIT, "comm ", c->name, " rank ", c->rank, "/", c->nranks, ": ", shmPeers.size(),
            " shm peers, ", tcpPeers.size(), " tcp peers, ", ucxPeers.size(), " ucx peers");
  // A bad LOOM_ALGO / LOOM_TUNE fails init here; the planner parses and applies them itself.
  plan::Overrides checked;
  return plan::parseOverrides(params::algo(), params::tune(), &checked);
}

// All ranks on one host: the planner shares that host's CPUs among them when they are fewer than
// the ranks (PlannerContext::hostCpus), and rank 0 says so once (INFO).
void noteHostCpus(const loomComm& c, plan::PlannerContext* ctx) {
  const int host = c.ids[c.rank].hostIndex;
  for (const auto& id : c.ids)
    if (id.hostIndex != host) return;
  ctx->hostCpus = hostCpus(c.ids, host);
  if (c.rank == 0 && c.nranks > ctx->hostCpus)
    LOOM_INFO(PLAN, "communicator ", c.name.empty() ? std::string("(unnamed)") : c.name, ": ",
              c.nranks, " ranks share this host's ", ctx->hostCpus,
              " CPUs; the planner prices the shared cores (cores=", ctx->hostCpus, ")");
}

// The planner sees where ranks are and how they talk: with a forced transport every pair uses it
// (tcp: as if every rank had its own host; shm: one host).
Status makePlanner(const CommOptions& opt, loomComm* c) {
  plan::PlannerContext ctx;
  ctx.nranks = c->nranks;
  std::string forced = !opt.transport.empty() ? opt.transport : params::transport();
  for (const auto& id : c->ids)
    ctx.hostOf.push_back(forced == "tcp" || forced == "ucx" ? id.rank
                         : forced == "shm"                  ? 0
                                                            : id.hostIndex);
  // Between hosts: tcp, or an RDMA network when the policy chose ucx for it.
  ctx.interHost = c->ucxRdma ? plan::Transport::kNet : plan::Transport::kTcp;
  // The one-host collective primitive, when a transport offers it: the "direct" algorithms.
  ctx.directBytes = c->exec.host ? c->exec.host->maxBytes() : 0;
  noteHostCpus(*c, &ctx);
  std::string topoFile = params::topoFile();
  if (!topoFile.empty() && forced.empty()) {
    auto t = std::make_unique<topo::Topology>();
    LOOM_CHECK(topo::loadTopologyFile(topoFile, t.get()));
    // With a fabric, host ids are the topology's host indices, matched by hostname.
    std::vector<int> hostOf;
    for (const auto& id : c->ids) {
      int h = -1;
      for (size_t i = 0; i < t->hosts.size(); ++i)
        if (t->hosts[i].name == id.hostname) h = static_cast<int>(i);
      if (h < 0) {
        LOOM_WARN(PLAN, "LOOM_TOPO_FILE ", topoFile, " has no host named ", id.hostname, " (",
                  id.describe(), "); planning without the fabric");
        hostOf.clear();
        break;
      }
      hostOf.push_back(h);
    }
    if (!hostOf.empty()) {
      ctx.hostOf = hostOf;
      c->topology = std::move(t);
      ctx.topology = c->topology.get();
    }
  }
  c->planner = std::make_unique<plan::Planner>(ctx);
  LOOM_CHECK(c->planner->status());
  return Status();
}

}  // namespace

Status commInit(const char* id, int nranks, int rank, const CommOptions& opt, loomComm* c) {
  c->rank = rank;
  c->nranks = nranks;
  c->options = opt;
  c->timeoutMs = opt.timeoutMs > 0 ? opt.timeoutMs : params::timeoutMs();
  log::setThreadRank(rank);
  std::unique_ptr<bootstrap::Bootstrap> b;
  LOOM_CHECK(bootstrap::Bootstrap::create(id, rank, nranks, c->timeoutMs, &c->abortFlag, &b));
  c->bootstrap = std::move(b);
  c->commTag = bootstrap::idTag(id);
  return commSetup(c);
}

namespace {
uint64_t tagKey(const std::string& tag) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char ch : tag) h = (h ^ static_cast<uint8_t>(ch)) * 0x100000001b3ull;
  return h;
}

Status startMonitor(loomComm* c) {
  if (c->nranks < 2) return Status();
  health::MonitorArgs m;
  m.rank = c->rank;
  m.nranks = c->nranks;
  m.ids = c->ids;
  bootstrap::Bootstrap* bs = c->bootstrap.get();
  m.allGather = [bs](void* data, size_t bytes) { return bs->allGather(data, bytes); };
  m.key = tagKey(c->commTag);
  m.intervalMs = health::heartbeatIntervalMs();
  m.silenceMs = health::heartbeatSilenceMs();
  m.revokedFlag = &c->revoked;
  m.onRevoke = [c] {
    for (auto* t : c->transports) t->wake();
  };
  return health::Monitor::create(m, &c->monitor);
}
}  // namespace

Status commSetup(loomComm* c) {
  const CommOptions& opt = c->options;
  c->name = opt.name;
  c->ids = c->bootstrap->peers();
  // A bad LOOM_CHECK_CALLS or LOOM_FAULT on one rank fails every rank, naming it.
  Status checks = readCheckCalls(c);
  if (checks.ok()) checks = readFaults(c);
  bootstrap::Bootstrap* bs = c->bootstrap.get();
  LOOM_CHECK(agreeOnOutcome([bs](void* d, size_t n) { return bs->allGather(d, n); }, c->rank,
                            c->nranks, c->ids, checks, "LOOM_CHECK_CALLS and LOOM_FAULT"));
  LOOM_CHECK(connectTransports(opt, c));
  sched::ExecContext& x = c->exec;
  x.rank = c->rank;
  x.transportOf = c->transportOf;
  x.transports = c->transports;
  x.host = c->shm ? c->shm->hostCollective() : nullptr;
  x.ids = &c->ids;
  x.abortFlag = &c->abortFlag;
  x.revokedFlag = &c->revoked;
  x.timeoutMs = c->timeoutMs;
  x.spinUs = params::spinUs();
  x.peerCheckMs = params::peerCheckMs();
  if (!params::stepTrace().empty()) {
    LOOM_CHECK(sched::StepTrace::open(log::expandPath(params::stepTrace(), c->rank), c->rank,
                                      c->nranks, &c->stepTrace));
    x.trace = c->stepTrace.get();
  }
  LOOM_CHECK(startMonitor(c));
  return makePlanner(opt, c);
}

void registerComm(loomComm* c) {
  std::lock_guard<std::mutex> g(registryMu());
  liveComms().insert(c);
}

bool unregisterComm(loomComm* c) {
  std::lock_guard<std::mutex> g(registryMu());
  return liveComms().erase(c) == 1;
}

bool isLiveComm(const loomComm* c) {
  std::lock_guard<std::mutex> g(registryMu());
  return liveComms().count(c) == 1;
}

Status checkComm(const loomComm* c, const char* arg) {
  if (c == nullptr) return invalidArgument(arg, " is NULL");
  if (!isLiveComm(c))
    return invalidUsage(arg, " is not a live communicator (destroyed, or never created)");
  return Status();
}

Status usableComm(loomComm* c) {
  LOOM_CHECK(checkComm(c));
  return waitInit(c);
}

Status waitInit(loomComm* c) {
  if (!c->initDone.load()) {
    std::lock_guard<std::mutex> g(c->mu);
    if (c->initThread.joinable()) c->initThread.join();
  }
  return c->initStatus;
}

void commFree(loomComm* c) {
  if (c->initThread.joinable()) c->initThread.join();
  c->monitor.reset();  // first: its thread wakes the transports
  c->transportOf.clear();
  c->transports.clear();
  c->exec.transportOf.clear();
  c->exec.transports.clear();
  c->exec.host = nullptr;
  c->shm.reset();
  c->tcp.reset();
  c->ucx.reset();
  // A communicator shrunk from this one may still use the bootstrap, but not this abort flag.
  if (c->bootstrap) c->bootstrap->setAbortFlag(nullptr);
  c->bootstrap.reset();
}

namespace {
// The planner's view of an operation (avg is a sum, divided afterwards).
sched::CollArgs collArgsOf(const OpDesc& op) {
  sched::CollArgs a;
  a.coll = op.coll;
  a.count = op.count;
  a.dtype = op.dtype;
  a.op = op.op == RedOp::kAvg ? RedOp::kSum : op.op;
  a.root = op.root;
  a.peer = op.peer;
  a.inPlace = op.inPlace;
  a.vcounts = op.vcounts ? op.vcounts->data() : nullptr;
  return a;
}
}  // namespace

Status scheduleFor(loomComm* c, const OpDesc& op, bool alone,
                   std::shared_ptr<const sched::Schedule>* out) {
  sched::CollArgs a = collArgsOf(op);
  a.chunkBytes = static_cast<uint64_t>(std::max<int64_t>(4096, params::chunkBytes()));
  const ScheduleKey key{static_cast<int>(a.coll),
                        static_cast<int>(a.dtype),
                        static_cast<int>(a.op),
                        a.root,
                        a.peer,
                        a.inPlace,
                        alone,
                        a.count,
                        a.chunkBytes};
  // All-to-all-v's per-peer counts are not in the key: its schedules are built for each call.
  const bool cacheable = op.coll != sched::CollType::kAllToAllv;
  {
    std::lock_guard<std::mutex> g(c->mu);
    auto it = cacheable ? c->cache.find(key) : c->cache.end();
    if (it != c->cache.end()) {
      *out = it->second;
      return Status();
    }
  }
  // Not built yet: point-to-point, gather, scatter and all-to-all-v have one way to go (their
  // first registered builder); everything else asks the planner.
  auto s = std::make_shared<sched::Schedule>();
  if (op.coll == sched::CollType::kSend || op.coll == sched::CollType::kRecv ||
      op.coll == sched::CollType::kGather || op.coll == sched::CollType::kScatter ||
      op.coll == sched::CollType::kAllToAllv) {
    sched::Group g;
    g.rank = c->rank;
    g.nranks = c->nranks;
    LOOM_CHECK(algo::algosFor(op.coll).front()->build(a, g, s.get()));
  } else {
    const plan::Decision& d = c->planner->choose(a, /*allowDirect=*/alone);
    if (d.algo == nullptr)
      return invalidArgument("no algorithm for ", sched::collName(op.coll), ": ", d.source);
    LOOM_CHECK(c->planner->build(d, a, c->rank, s.get()));
    LOOM_INFO(PLAN, sched::collName(op.coll), " ", op.count, " x ", dtypeName(op.dtype), " -> ",
              d.describe(), " (", d.source, "), ", s->steps.size(), " steps");
  }
  *out = s;
  if (!cacheable) return Status();
  std::lock_guard<std::mutex> g(c->mu);
  if (c->cache.size() > 256) c->cache.clear();
  c->cache[key] = s;
  return Status();
}

Status runOpsOnce(loomComm* c, const std::vector<OpDesc>& ops);

namespace {

uint64_t avgElems(const loomComm* c, const OpDesc& o) {
  if (o.op != RedOp::kAvg) return 0;
  if (o.coll == sched::CollType::kReduce && c->rank != o.root) return 0;
  return o.count;  // allreduce: count; reduce: count at root; reducescatter: recvcount
}

// A failure often cascades: rank 2 dies, rank 3 notices and leaves, and rank 0 then sees rank 3
// leave. Name the root cause: same-host peers whose process is gone.
Status rootCause(const loomComm* c, Status s) {
  if (s.code() != Code::kRemoteError) return s;
  std::string dead;
  for (const PeerIdentity& id : c->ids) {
    if (id.rank == c->rank || !id.sameHostAs(c->ids[c->rank])) continue;
    if (processGone(id.pid)) dead += (dead.empty() ? "" : ", ") + id.describe();
  }
  if (dead.empty() || s.message().find(dead) != std::string::npos) return s;
  return remoteError(dead, dead.find(", ") == std::string::npos ? " is" : " are",
                     " no longer running (first seen as: ", s.message(), ")");
}

}  // namespace

Status revokedStatus(const loomComm* c) {
  if (!c->revoked.load(std::memory_order_relaxed)) return Status();
  if (c->monitor) return c->monitor->verdict();
  return revokedError("communicator revoked (loomCommRevoke)");
}

Status afterFailure(loomComm* c, Status s) {
  if (!c->monitor) return rootCause(c, std::move(s));
  c->monitor->drain();
  for (const PeerIdentity& id : c->ids) {
    if (id.rank == c->rank || !id.sameHostAs(c->ids[c->rank]) || !processGone(id.pid)) continue;
    c->monitor->declareFailed(id.rank, "its process is gone");
  }
  // A remote error may be a neighbour that gave up because of someone else: wait for the verdict.
  const int64_t hb = health::heartbeatIntervalMs();
  const int64_t waitMs = hb > 0 ? health::heartbeatSilenceMs() + 2 * hb : 200;
  Status v =
      s.code() == Code::kRemoteError ? c->monitor->awaitVerdict(waitMs) : c->monitor->verdict();
  if (!v.ok()) return v;
  return rootCause(c, std::move(s));
}

// A failed call's error: misuse (a call mismatch or a corrupted message, which makes this rank give
// up on the communicator) is reported as it is; anything else waits for the heartbeat's verdict.
Status failedCall(loomComm* c, Status s) {
  s = giveUpOnMisuse(c, std::move(s));
  {
    std::lock_guard<std::mutex> g(c->mu);
    if (!c->gaveUp.empty()) return s;
  }
  return afterFailure(c, std::move(s));
}

Status runOps(loomComm* c, const std::vector<OpDesc>& ops) {
  if (anyStaged(ops)) return runStaged(ops, [c](const auto& host) { return runOps(c, host); });
  LOOM_CHECK(revokedStatus(c));
  Status s = runOpsOnce(c, ops);
  return s.ok() ? s : failedCall(c, std::move(s));
}

Status runOp(loomComm* c, const OpDesc& o) {
  if (o.staging) return runStaged({o}, [c](const auto& host) { return runOp(c, host[0]); });
  if (c->revoked.load(std::memory_order_relaxed)) return revokedStatus(c);
  std::shared_ptr<const sched::Schedule> s;
  const RedOp norm = o.op == RedOp::kAvg ? RedOp::kSum : o.op;
  if (!c->faults.empty()) fireFaults(c);
  const CallDesc call = nextCall(c, o, /*checked=*/true);
  Status st = beginCall(c, call);
  if (st.ok()) st = scheduleFor(c, o, /*alone=*/true, &s);
  if (st.ok()) st = sched::execute(*s, o.send, o.recv, o.dtype, norm, c->exec, &call);
  if (!st.ok()) return failedCall(c, std::move(st));
  const uint64_t n = avgElems(c, o);
  if (n > 0) kernels::divideInPlace(o.recv, n, o.dtype, c->nranks);
  return Status();
}

Status runOpsOnce(loomComm* c, const std::vector<OpDesc>& ops) {
  const sched::ExecContext& ctx = c->exec;
  if (!c->faults.empty()) fireFaults(c);
  // A call alone is checked; calls merged into a group are not (each still takes its number).
  std::vector<CallDesc> calls;
  for (const OpDesc& o : ops) calls.push_back(nextCall(c, o, /*checked=*/ops.size() == 1));
  LOOM_CHECK(beginCall(c, calls.size() == 1 ? calls[0] : CallDesc{}));
  // Reductions of one (dtype, op) class run together; each further class runs after, in order.
  std::vector<bool> ran(ops.size(), false);
  for (size_t first = 0; first < ops.size(); ++first) {
    if (ran[first]) continue;
    sched::Schedule merged;
    std::vector<uint8_t*> bufs(3, nullptr);
    DataType dt = DataType::kUint8;
    RedOp rop = RedOp::kSum;
    bool haveClass = false;
    for (size_t i = first; i < ops.size(); ++i) {
      const OpDesc& o = ops[i];
      if (ran[i]) continue;
      RedOp norm = o.op == RedOp::kAvg ? RedOp::kSum : o.op;
      if (o.reduces()) {
        if (haveClass && (o.dtype != dt || norm != rop)) continue;
        haveClass = true;
        dt = o.dtype;
        rop = norm;
      }
      std::shared_ptr<const sched::Schedule> s;
      LOOM_CHECK(scheduleFor(c, o, /*alone=*/ops.size() == 1, &s));
      if (ops.size() == 1) {
        LOOM_CHECK(sched::execute(*s,
                                  {const_cast<uint8_t*>(static_cast<const uint8_t*>(o.send)),
                                   static_cast<uint8_t*>(o.recv), nullptr},
                                  o.dtype, norm, ctx, &calls[0]));
        ran[i] = true;
        break;
      }
      merged.append(*s);
      bufs.push_back(const_cast<uint8_t*>(static_cast<const uint8_t*>(o.send)));
      bufs.push_back(static_cast<uint8_t*>(o.recv));
      ran[i] = true;
    }
    if (ops.size() > 1) LOOM_CHECK(sched::execute(merged, bufs, dt, rop, ctx));
  }
  for (const OpDesc& o : ops) {
    uint64_t n = avgElems(c, o);
    if (n > 0) kernels::divideInPlace(o.recv, n, o.dtype, c->nranks);
  }
  return Status();
}

loomResult_t toResult(Code c) { return static_cast<loomResult_t>(static_cast<int>(c)); }

}  // namespace loom::api
