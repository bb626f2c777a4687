#include "simulate.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "sched/executor.h"
#include "sim/from_topology.h"
#include "sim/local_host.h"
#include "sim/schedule_set.h"

namespace loomplan {

using namespace loom;

namespace {

std::string human(uint64_t b) {
  const char* u[] = {"B", "K", "M", "G"};
  int k = 0;
  while (b >= 1024 && b % 1024 == 0 && k < 3) b /= 1024, ++k;
  return std::to_string(b) + u[k];
}

// Candidates the simulator runs: the model's choice, then one per (algorithm, order, level), then
// chunk variants, all within `window` seconds, at most `top`.
std::vector<plan::Decision> pickCandidates(const std::vector<plan::Decision>& cands,
                                           const plan::Decision& best, double window, int top) {
  std::vector<plan::Decision> pick = {best};
  std::set<std::string> names = {best.describe()};
  auto shape = [](const plan::Decision& d) {
    return strCat(d.algo->name, d.order.empty() ? "/rank/" : "/topo/", static_cast<int>(d.level));
  };
  std::set<std::string> shapes = {shape(best)};
  for (int pass = 0; pass < 2; ++pass) {
    for (const plan::Decision& d : cands) {
      if (static_cast<int>(pick.size()) >= top || d.predictedSec > window) break;
      if (names.count(d.describe()) || (pass == 0 && shapes.count(shape(d)))) continue;
      pick.push_back(d);
      names.insert(d.describe());
      shapes.insert(shape(d));
    }
  }
  return pick;
}

}  // namespace

PlanSimulator::PlanSimulator(plan::Planner* planner, SimulateSetup setup)
    : planner_(planner), s_(std::move(setup)) {}

Status PlanSimulator::init() {
  const plan::CostParams& cp = s_.params;
  const SimulateOptions& o = s_.opt;
  const int p = s_.nranks;
  if (static_cast<int>(s_.hostOf.size()) != p)
    return invalidArgument("--simulate: ", s_.hostOf.size(), " host entries for ", p, " ranks");
  if (o.margin < 0 || o.top < 1 || o.maxRanks < 1 || o.flowBudget < 1 || o.localCores < 0 ||
      o.coreGBps < 0 || o.copyGBps < 0 || o.reduceIpGBps < 0 || o.pairCopyGBps < 0)
    return invalidArgument(
        "--sim-margin must be >= 0, --sim-top, --sim-max-ranks, --sim-flows >= 1",
        ", --sim-cores, --sim-core-gbps, --sim-copy-gbps, --sim-reduce-ip-gbps and ",
        "--sim-pair-copy-gbps >= 0");
  if (o.pairCopyGBps > 0 && o.localCores <= 0)
    return invalidArgument("--sim-pair-copy-gbps needs --sim-cores (one machine's shared cores)");
  std::vector<int> localOf(p);
  std::map<int, int> seen;
  for (int r = 0; r < p; ++r) localOf[r] = seen[s_.hostOf[r]]++;
  const bool tcp = s_.interHost == plan::Transport::kTcp;
  simOpt_.routing = sim::RoutingMode::kSpray;
  simOpt_.latNvlinkUs = simOpt_.latPcieUs = cp.shmAlphaUs;
  simOpt_.latNetUs = tcp ? cp.tcpAlphaUs : cp.netAlphaUs;
  simOpt_.latHopUs = cp.switchHopUs;
  simOpt_.reduceGBps = cp.reduceGBps;
  simOpt_.reduceInPlaceGBps = o.reduceIpGBps;
  simOpt_.copyGBps = cp.shmGBps;
  rankGpu_.assign(p, 0);
  if (o.localCores > 0) {
    // One machine: every pair talks shm (the planner sees one host) or tcp loopback (one host
    // per rank, as loom plans under LOOM_TRANSPORT=tcp).
    const bool oneHost = seen.size() == 1, ownHosts = static_cast<int>(seen.size()) == p;
    if (!oneHost && !ownHosts)
      return invalidArgument("--sim-cores: ranks must all share one host (shm) or each have ",
                             "their own (tcp loopback); got ", seen.size(), " hosts for ", p,
                             " ranks");
    const bool viaTcp = !oneHost;
    const double pairGBps = viaTcp ? cp.tcpGBps : cp.shmGBps;
    sim::LocalHostParams lp;
    lp.hosts = 1;
    lp.ranksPerHost = p;
    lp.flowGBps = lp.nicGBps = 1e6;  // no link limit: the cores and the pair rate are the limits
    lp.hostGBps = cp.hostMemGBps;
    LOOM_CHECK(sim::localHostNet(lp, &net_));
    simOpt_.latNvlinkUs = simOpt_.latPcieUs = viaTcp ? cp.tcpAlphaUs : cp.shmAlphaUs;
    simOpt_.computeShared = true;
    simOpt_.hostCores = o.localCores;
    simOpt_.pairGBps = pairGBps;
    simOpt_.sendCoreGBps = simOpt_.recvCoreGBps = o.coreGBps > 0 ? o.coreGBps : 2 * pairGBps;
    // shm: the receiver reduces straight out of the ring, a reduction instead of its copy; tcp: it
    // still reads the bytes out of the socket (a receive) and then reduces them from its staging.
    auto onReceipt = [&](double red) {
      return viaTcp ? 1.0 / (1.0 / simOpt_.recvCoreGBps + 1.0 / red) : red;
    };
    simOpt_.recvReduceCoreGBps = onReceipt(cp.reduceGBps);
    simOpt_.recvReduceInPlaceCoreGBps = o.reduceIpGBps > 0 ? onReceipt(o.reduceIpGBps) : 0;
    simOpt_.reduceGBps = cp.reduceGBps;
    simOpt_.copyGBps = o.copyGBps > 0 ? o.copyGBps : simOpt_.sendCoreGBps;
    simOpt_.pairCopyGBps = viaTcp ? 0 : o.pairCopyGBps;
    LOOM_CHECK(
        sim::parseBusySlowdown(o.busySlowdown, "--sim-busy-slowdown", &simOpt_.busySlowdown));
    for (const auto& [k, f] : simOpt_.busySlowdown)
      if (k <= o.localCores || !(f > 0))
        return invalidArgument("--sim-busy-slowdown: ", k, ":", f, " needs more busy ranks than ",
                               "--sim-cores (", o.localCores, ") and a slowdown > 0");
    if (o.busyByDemand && o.busySlowdown.empty())
      return invalidArgument("--sim-busy-by-demand needs --sim-busy-slowdown");
    simOpt_.busyByDemand = o.busyByDemand;
    for (int r = 0; r < p; ++r) rankGpu_[r] = r;
    return Status();
  }
  if (!o.busySlowdown.empty())
    return invalidArgument("--sim-busy-slowdown needs --sim-cores (one machine's shared cores)");
  if (s_.topology) {
    sim::NodeParams np;
    np.gpusPerNode = s_.perHost;
    np.nicsPerNode = 1;
    np.nvlinkDomain = s_.perHost;
    np.nvlinkGBps = cp.shmGBps;
    np.pcieGBps =
        tcp ? cp.tcpGBps : 1000;  // RDMA: the NIC, not the host side, limits (as the model)
    net_ = std::make_unique<sim::Net>(np);
    LOOM_CHECK(sim::netFromTopology(*s_.topology, net_.get()));
    for (int h = 0; h < net_->numHosts(); ++h) net_->addHostShared(h, cp.hostMemGBps);
  } else {
    sim::LocalHostParams lp;
    lp.hosts = s_.hosts;
    lp.ranksPerHost = s_.perHost;
    lp.flowGBps = cp.shmGBps;
    lp.hostGBps = cp.hostMemGBps;
    lp.nicGBps = tcp ? cp.tcpGBps : cp.netGBps;
    LOOM_CHECK(sim::localHostNet(lp, &net_));
  }
  for (int r = 0; r < p; ++r) {
    const int h = s_.hostOf[r];
    if (h < 0 || h >= net_->numHosts() || localOf[r] >= s_.perHost)
      return invalidArgument("--simulate: rank ", r, " on host ", h, " (local index ", localOf[r],
                             ") does not fit ", net_->numHosts(), " hosts x ", s_.perHost);
    rankGpu_[r] = net_->host(h).firstGpu + localOf[r];
  }
  return Status();
}

std::string PlanSimulator::describeModel() const {
  const plan::CostParams& cp = s_.params;
  const bool tcp = s_.interHost == plan::Transport::kTcp;
  std::ostringstream os;
  if (s_.opt.localCores > 0) {
    os << "one machine, " << s_.nranks << " ranks as processes sharing " << s_.opt.localCores
       << " cores max-min: a byte sent or received costs " << 1 / simOpt_.sendCoreGBps
       << " core-ns, reduced on receipt " << 1 / simOpt_.recvReduceCoreGBps;
    if (simOpt_.recvReduceInPlaceCoreGBps > 0)
      os << " (in place " << 1 / simOpt_.recvReduceInPlaceCoreGBps << ")";
    os << ", copied " << 1 / simOpt_.copyGBps << ", a pair moves at most " << simOpt_.pairGBps
       << " GB/s";
    if (simOpt_.pairCopyGBps > 0)
      os << " (a reduction out of its ring holds it 1 / (reduced on receipt) - "
         << 1 / simOpt_.pairCopyGBps << " ns more per byte)";
    os << ", " << simOpt_.latNvlinkUs << " us per message";
    if (!simOpt_.busySlowdown.empty()) {
      os << "; with k ranks busy the cores deliver 1/f(k):";
      for (const auto& [k, f] : simOpt_.busySlowdown) os << " " << k << ":" << f;
    }
  } else {
    os << (s_.topology ? "the topology's fabric" : "a flat non-blocking switch")
       << ", spray routing, " << s_.perHost << " ranks per host at " << cp.shmGBps
       << " GB/s each sharing " << cp.hostMemGBps << " GB/s host memory, between hosts "
       << (tcp ? "tcp" : "net") << " (" << simOpt_.latNetUs << " us + " << simOpt_.latHopUs
       << " us per switch), reduce " << simOpt_.reduceGBps << " GB/s";
  }
  if (s_.opt.inPlace) os << "; the in-place call";
  return os.str();
}

Status PlanSimulator::simulateOne(const sched::CollArgs& callArgs, SimulatedCandidate* c,
                                  int traceCall, std::FILE* trace) {
  const int p = s_.nranks;
  sched::CollArgs args = callArgs;
  args.inPlace = args.inPlace || s_.opt.inPlace;
  if (p > s_.opt.maxRanks) {
    c->skipped = strCat("over budget: ", p, " ranks > ", s_.opt.maxRanks);
    return Status();
  }
  if (c->d.direct) {  // one step over the host's shared segment: the flow model has no such thing
    c->skipped = "direct: priced by the cost model, not simulated";
    return Status();
  }
  sched::Schedule s0;
  LOOM_CHECK(planner_->build(c->d, args, 0, &s0));
  uint64_t sends = 0;
  for (const sched::Step& st : s0.steps) sends += st.op == sched::OpKind::kSend;
  c->flows = std::max<uint64_t>(1, sends) * p;
  if (c->flows > s_.opt.flowBudget) {
    c->skipped = strCat("over budget: about ", c->flows, " flows > ", s_.opt.flowBudget);
    return Status();
  }
  sim::ScheduleSet set(p);
  const plan::Decision& d = c->d;
  auto build = [&](const sched::CollArgs& a, const sched::Group& g, sched::Schedule* out) {
    return planner_->build(d, a, g.rank, out);
  };
  LOOM_CHECK(sim::buildScheduleSet(build, args, p, s_.hostOf, &set));
  sim::SimResult res;
  sim::SimOptions o = simOpt_;
  o.traceSteps = trace != nullptr;
  LOOM_CHECK(sim::simulate(*net_, set, rankGpu_, o, &res));
  c->simSec = res.seconds;
  c->flows = res.flows;
  if (trace == nullptr) return Status();
  for (int r = 0; r < p; ++r) {
    const sim::Shape& sh = set.shapeOfRank(r);
    for (size_t i = 0; i < sh.steps.size(); ++i) {
      const sim::SimStep& st = sh.steps[i];
      const bool net = st.op == sched::OpKind::kSend || st.op == sched::OpKind::kRecv ||
                       st.op == sched::OpKind::kRecvReduce;
      std::fputs(
          sched::stepTraceLine(r, static_cast<uint64_t>(traceCall), i, st.op,
                               net ? (r + st.peerDelta) % p : -1, st.bytes,
                               res.stepStartSeconds[r][i] * 1e6, res.stepEndSeconds[r][i] * 1e6)
              .c_str(),
          trace);
    }
  }
  return Status();
}

Status PlanSimulator::row(const sched::CollArgs& args, SimulatedRow* out) {
  *out = SimulatedRow();
  const SimulateOptions& o = s_.opt;
  out->bytes = plan::Planner::messageBytes(args, s_.nranks);
  out->model = planner_->choose(args);
  if (!out->model.algo) return invalidArgument(out->model.source);
  out->decision = out->model;
  out->by = "model";
  if (out->model.source != "cost" && out->model.source != "only") {
    out->why = strCat("forced by ", out->model.source);
    out->consulted = true;
    SimulatedCandidate c;
    c.d = out->model;
    LOOM_CHECK(simulateOne(args, &c));
    out->decisionSimSec = c.simSec;
    out->sims.push_back(c);
    out->by = "forced";
    return Status();
  }
  const std::vector<plan::Decision> cands = planner_->candidates(args);
  const plan::Decision& best = out->model;
  const double bestT = best.predictedSec;
  const bool contended = !best.bottleneck.empty() && best.bottleneck != "single flow";
  int close = 0;
  for (const plan::Decision& d : cands)
    close += d.describe() != best.describe() && d.predictedSec <= bestT * (1 + o.margin);
  if (contended)
    out->why = strCat("contention: ", best.bottleneck);
  else if (close > 0)
    out->why = strCat("close call: ", close, " within ", static_cast<int>(o.margin * 100), "%");
  else
    out->why = "sure";
  if (!contended && close == 0 && !o.always) return Status();
  out->consulted = true;
  const double window = bestT * (contended ? 2.0 : 1.0 + o.margin);
  for (const plan::Decision& d : pickCandidates(cands, best, window, o.top)) {
    SimulatedCandidate c;
    c.d = d;
    LOOM_CHECK(simulateOne(args, &c));
    out->sims.push_back(std::move(c));
  }
  const SimulatedCandidate* win = nullptr;
  for (const SimulatedCandidate& c : out->sims)
    if (c.simSec >= 0 && (!win || c.simSec < win->simSec)) win = &c;
  if (!win) {
    out->by = "model (simulator over budget)";
    return Status();
  }
  out->decision = win->d;
  out->decisionSimSec = win->simSec;
  out->by = "simulator";
  return Status();
}

Status printSimulateTable(PlanSimulator* ps, sched::CollArgs args, uint64_t lo, uint64_t hi,
                          const std::function<uint64_t(uint64_t)>& countFor) {
  std::printf("# simulator: %s\n", ps->describeModel().c_str());
  std::printf("%8s | %-46s %10s | %10s | %-46s %10s | %s\n", "size", "model choice", "model us",
              "sim us", "decision", "sim us", "by (why)");
  auto us = [](double s) {
    char b[32];
    if (s < 0) return std::string("-");
    std::snprintf(b, sizeof b, "%.1f", s * 1e6);
    return std::string(b);
  };
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> trace(nullptr, &std::fclose);
  if (!ps->options().stepTrace.empty()) {
    trace.reset(std::fopen(ps->options().stepTrace.c_str(), "w"));
    if (!trace)
      return invalidArgument("--sim-step-trace: cannot open '", ps->options().stepTrace,
                             "': ", std::strerror(errno));
    std::fprintf(trace.get(), "# loom simulated step trace (%s): %s\n", ps->describeModel().c_str(),
                 sched::kStepTraceFields);
  }
  int call = 0;
  for (uint64_t b = lo; b <= hi; b *= 2, ++call) {
    args.count = countFor(b);
    SimulatedRow row;
    LOOM_CHECK(ps->row(args, &row));
    if (trace) {
      SimulatedCandidate c;
      c.d = row.decision;
      LOOM_CHECK(ps->simulateOne(args, &c, call, trace.get()));
      if (c.simSec < 0)
        std::fprintf(trace.get(), "# call %d (%s): not simulated, %s\n", call,
                     c.d.describe().c_str(), c.skipped.c_str());
    }
    double modelSim = -1;
    for (const SimulatedCandidate& c : row.sims)
      if (c.d.describe() == row.model.describe()) modelSim = c.simSec;
    std::printf("%8s | %-46s %10s | %10s | %-46s %10s | %s (%s)\n", human(row.bytes).c_str(),
                row.model.describe().c_str(), us(row.model.predictedSec).c_str(),
                us(modelSim).c_str(), row.decision.describe().c_str(),
                us(row.decisionSimSec).c_str(), row.by.c_str(), row.why.c_str());
    for (const SimulatedCandidate& c : row.sims) {
      const std::string note = c.skipped.empty() ? strCat(c.flows, " flows") : c.skipped;
      std::printf("%8s |   ~ %-44s %10s | %10s | %s\n", "", c.d.describe().c_str(),
                  us(c.d.predictedSec).c_str(), us(c.simSec).c_str(), note.c_str());
    }
  }
  return Status();
}

int simulateMain(plan::Planner* planner, SimulateSetup setup, const sched::CollArgs& args,
                 uint64_t lo, uint64_t hi, const std::function<uint64_t(uint64_t)>& countFor) {
  setup.params = planner->model().params();
  // The cost parameters' shared cores (a one-machine job) select the local-machine model too.
  if (setup.opt.localCores == 0 && setup.params.cores > 0)
    setup.opt.localCores = static_cast<int>(setup.params.cores);
  PlanSimulator ps(planner, std::move(setup));
  Status s = ps.init();
  if (s.ok()) s = printSimulateTable(&ps, args, lo, hi, countFor);
  if (!s.ok()) {
    std::fprintf(stderr, "loom-plan: %s\n", s.toString().c_str());
    return 1;
  }
  return 0;
}

void addSimulateOptions(CLI::App* app, bool* simulate, SimulateOptions* o) {
  // Every --sim-* option needs --simulate (given alone it would be silently ignored).
  CLI::Option* sim =
      app->add_flag("--simulate", *simulate,
                    "Ask the fabric simulator where the cost model is unsure (contention, or "
                    "candidates within --sim-margin) and decide by simulated time there");
  app->add_option("--sim-margin", o->margin, "Close call: candidates within this fraction (0.25)")
      ->needs(sim);
  app->add_option("--sim-top", o->top, "Candidates simulated per size (4)")->needs(sim);
  app->add_option("--sim-flows", o->flowBudget, "Flow budget per simulated candidate (1M)")
      ->needs(sim);
  app->add_option("--sim-max-ranks", o->maxRanks, "No simulation above this many ranks (4096)")
      ->needs(sim);
  app->add_flag("--sim-always", o->always, "Consult the simulator at every size")->needs(sim);
  app->add_option("--sim-cores", o->localCores,
                  "Ranks are processes of one machine with this many cores (loom's shm/tcp runs)")
      ->needs(sim);
  app->add_option("--sim-core-gbps", o->coreGBps,
                  "With --sim-cores: bytes per second one core moves on one side of a transfer "
                  "(default 2 x the transport's rate)")
      ->needs(sim);
  app->add_option("--sim-copy-gbps", o->copyGBps,
                  "With --sim-cores: bytes per second one core copies in a local copy step (a "
                  "memcpy; default --sim-core-gbps)")
      ->needs(sim);
  app->add_option("--sim-reduce-ip-gbps", o->reduceIpGBps,
                  "Reduction rate (GB/s, one core) of a reduction whose local operand is its "
                  "destination (dst = dst + x: every one of an in-place call's, and an "
                  "out-of-place Rabenseifner's after its first step; default the parameters' "
                  "reduceGBps)")
      ->needs(sim);
  app->add_option("--sim-pair-copy-gbps", o->pairCopyGBps,
                  "With --sim-cores, over shm: the receiver's local copy rate (GB/s, a memcpy); "
                  "a receive that reduces out of the pair ring holds the pair's handoff 1 / "
                  "(its reduction rate) - 1 / this longer per byte than a copying one (default 0: "
                  "not at all)")
      ->needs(sim);
  app->add_flag("--sim-in-place", o->inPlace,
                "Simulate the in-place call (send buffer = receive buffer: no copy of the "
                "input, reductions in place), as the perf drivers' in-place column")
      ->needs(sim);
  app->add_option("--sim-busy-slowdown", o->busySlowdown,
                  "With --sim-cores: K:F,... while K ranks are busy at once (more than the "
                  "cores) they deliver 1/F of the cores' capacity, linear in between (e.g. "
                  "4:1.3,8:1.6)")
      ->needs(sim);
  app->add_option("--sim-step-trace", o->stepTrace,
                  "Write the decision's simulated steps at each size to this file, in "
                  "LOOM_STEP_TRACE's format (call k: the k-th size; perf/step_trace.py reads it)")
      ->needs(sim);
  app->add_flag("--sim-busy-by-demand", o->busyByDemand,
                "With --sim-busy-slowdown: a busy rank counts as the share of its core its "
                "transfers and reductions would take alone (at most 1)")
      ->needs(sim);
}

}  // namespace loomplan
