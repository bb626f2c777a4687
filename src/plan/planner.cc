#include "plan/planner.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/log.h"
#include "core/params.h"
#include "plan/patterns.h"

namespace loom::plan {
namespace {

using sched::CollType;

bool layoutFree(CollType c) {
  return c == CollType::kAllReduce || c == CollType::kBroadcast || c == CollType::kReduce;
}
bool pipelinedAlgo(const std::string& a) {
  return a == "ring" || a == "tree" || a == "hier" || a == "hier_tree" || a == "binomial" ||
         a == "ring_rail";
}
// Algorithms that run several channels (CollArgs::channels) and order ranks themselves.
bool multiChannel(const std::string& a) { return a == "ring_rail"; }

// Ranks on the smallest host (hostOf: rank -> host id).
int smallestHost(const std::vector<int>& hostOf, int p) {
  if (hostOf.size() != static_cast<size_t>(p)) return 1;
  std::map<int, int> n;
  for (int h : hostOf) ++n[h];
  int m = p;
  for (auto& [h, c] : n) m = std::min(m, c);
  return m;
}
bool hierarchical(const std::string& a) { return a.rfind("hier", 0) == 0; }

std::string sizeStr(uint64_t b) {
  const char* u[] = {"B", "KiB", "MiB", "GiB"};
  int k = 0;
  double v = static_cast<double>(b);
  while (v >= 1024 && k < 3 && b % 1024 == 0) v /= 1024, b /= 1024, ++k;
  return strCat(static_cast<uint64_t>(v), " ", u[k]);
}

// LOOM_PLAN_PARAMS: "key=value,..." or "@file" holding the same (loom-plan --save-params).
Status readParams(CostParams* out) {
  std::string text = params::planParams();
  if (text.empty()) return Status();
  if (text[0] == '@') {
    std::ifstream in(text.substr(1));
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in) return invalidArgument("LOOM_PLAN_PARAMS: cannot read ", text.substr(1));
    text = ss.str();
  }
  Status s = CostParams::parse(text, out);
  if (!s.ok()) return invalidArgument("LOOM_PLAN_PARAMS: ", s.message());
  return s;
}

// The collective's algorithm over the transport's one-host primitive (LOOM_HOST_ALGO in
// algo/registry.def), or nullptr.
const algo::AlgoInfo* hostAlgo(CollType c) {
  for (const algo::AlgoInfo* a : algo::algosFor(c, /*withHost=*/true))
    if (a->host) return a;
  return nullptr;
}
bool hasDirect(CollType c) { return hostAlgo(c) != nullptr; }

// Whether an override sends all-reduces or barriers to the direct path.
bool namesDirect(const Overrides& o) {
  for (const auto* list : {&o.forced, &o.tune})
    for (const TuneRange& r : *list)
      if (hasDirect(r.coll) && r.algo == "direct") return true;
  return false;
}

}  // namespace

std::string Decision::describe() const {
  if (!algo) return "none";
  if (direct) return "direct";
  std::string s = strCat(algo->name, "(");
  if (hierarchical(algo->name)) s += strCat("level=", levelName(level), ",");
  s += strCat("order=", order.empty() ? "rank" : "topo");
  if (multiChannel(algo->name) && channels > 0) s += strCat(",channels=", channels);
  if (chunkBytes && pipelinedAlgo(algo->name)) s += strCat(",chunk=", sizeStr(chunkBytes));
  return s + ")";
}

Planner::Planner(const PlannerContext& ctx) : ctx_(ctx) {
  if (ctx_.readEnv) {
    if (ctx_.algo.empty()) ctx_.algo = params::algo();
    if (ctx_.tune.empty()) ctx_.tune = params::tune();
    if (ctx_.chunkBytes == 0) ctx_.chunkBytes = static_cast<uint64_t>(params::chunkBytes());
  }
  if (ctx_.chunkBytes == 0) ctx_.chunkBytes = 512 * 1024;
  status_ = parseOverrides(ctx_.algo, ctx_.tune, &over_);
  if (ctx_.hostCpus > 0 && ctx_.nranks > ctx_.hostCpus && ctx_.params.cores == 0)
    ctx_.params.cores = ctx_.hostCpus;
  if (ctx_.readEnv && status_.ok()) {
    CostParams fromEnv = ctx_.params;
    status_ = readParams(&fromEnv);
    // shm's single-copy protocol as the transport will run it.
    fromEnv.shmCmaBytes = static_cast<double>(params::shmCmaThreshold());
    if (params::shmCma() == "off") fromEnv.shmCmaGBps = 0;
    if (status_.ok()) ctx_.params = fromEnv;
  }
  if (!status_.ok()) {
    LOOM_WARN(PLAN, "ignoring LOOM_ALGO / LOOM_TUNE / LOOM_PLAN_PARAMS: ", status_.message());
    over_ = Overrides();
  }
  if (ctx_.directBytes == 0 && namesDirect(over_))
    LOOM_WARN(PLAN,
              "LOOM_ALGO / LOOM_TUNE name allreduce:direct, but this communicator has no one-host "
              "direct path (its ranks are not all on one host with shared memory between every "
              "pair, the transport is forced to tcp, or LOOM_SHM_DIRECT_BYTES=0): the cost model "
              "chooses its all-reduces instead");
  Placement pl;
  pl.nranks = ctx_.nranks;
  pl.hostOf = ctx_.hostOf;
  pl.interHost = ctx_.interHost;
  pl.topology = ctx_.topology;
  model_ = std::make_unique<CostModel>(pl, ctx_.params);
  topoOrder_ = topologyOrder(*model_);
  // The tuning table holds for the calibrated shapes only: one host over shm, or one rank per
  // host over tcp, and no fabric.
  std::vector<int> hosts = ctx_.hostOf;
  std::sort(hosts.begin(), hosts.end());
  const bool oneHost = hosts.empty() || hosts.front() == hosts.back();
  const bool distinct = std::adjacent_find(hosts.begin(), hosts.end()) == hosts.end();
  if (!ctx_.topology && hosts.size() == static_cast<size_t>(ctx_.nranks) && ctx_.nranks > 1) {
    if (oneHost) tunedTransport_ = static_cast<int>(Transport::kShm);
    if (distinct && ctx_.interHost == Transport::kTcp)
      tunedTransport_ = static_cast<int>(Transport::kTcp);
  }
}

bool Planner::directFits(const sched::CollArgs& args) const {
  return hasDirect(args.coll) && ctx_.directBytes > 0 &&
         messageBytes(args, ctx_.nranks) <= ctx_.directBytes;
}

Decision Planner::directDecision(const sched::CollArgs& args) const {
  Decision d;
  d.algo = hostAlgo(args.coll);
  d.direct = true;
  d.predictedSec = model_->priceDirect(messageBytes(args, ctx_.nranks));
  d.bottleneck =
      ctx_.params.fit("direct", Transport::kShm) ? "direct path" : "direct path, not calibrated";
  return d;
}

std::string Planner::tunedAlgo(const sched::CollArgs& args) const {
  if (tunedTransport_ < 0 || args.coll != CollType::kAllReduce) return "";
  return ctx_.params.tunedAlgo(static_cast<Transport>(tunedTransport_), ctx_.nranks,
                               messageBytes(args, ctx_.nranks));
}

uint64_t Planner::messageBytes(const sched::CollArgs& a, int p) {
  uint64_t b = a.count * dtypeSize(a.dtype);
  if (a.coll == CollType::kAllGather || a.coll == CollType::kReduceScatter ||
      a.coll == CollType::kAllToAll)
    b *= p;
  return b;
}

double Planner::busFactor(CollType c, int p) {
  if (p <= 1) return 1;
  switch (c) {
    case CollType::kAllReduce:
      return 2.0 * (p - 1) / p;
    case CollType::kAllGather:
    case CollType::kReduceScatter:
    case CollType::kAllToAll:
      return double(p - 1) / p;
    default:
      return 1;
  }
}

Status Planner::build(const Decision& d, const sched::CollArgs& args, int rank,
                      sched::Schedule* out) const {
  const int p = ctx_.nranks;
  if (!d.algo) return invalidArgument("planner: decision without an algorithm");
  if (d.direct) {  // one step over the host's primitive: no order, no hierarchy
    sched::Group g;
    g.rank = rank;
    g.nranks = p;
    return d.algo->build(args, g, out);
  }
  std::vector<int> pos(p);
  for (int v = 0; v < p; ++v) pos[d.order.empty() ? v : d.order[v]] = v;
  auto at = [&](int v) { return d.order.empty() ? v : d.order[v]; };
  sched::Group g;
  g.rank = pos[rank];
  g.nranks = p;
  const std::vector<int>& hosts = d.parts.empty() ? ctx_.hostOf : d.parts;
  if (hosts.size() == static_cast<size_t>(p))
    for (int v = 0; v < p; ++v) g.hostOf.push_back(hosts[at(v)]);
  sched::CollArgs a = args;
  if (d.chunkBytes) a.chunkBytes = d.chunkBytes;
  if (d.channels > 0) a.channels = d.channels;
  if (a.root >= 0 && a.root < p) a.root = pos[a.root];
  if (a.peer >= 0 && a.peer < p) a.peer = pos[a.peer];
  LOOM_CHECK(d.algo->build(a, g, out));
  if (!d.order.empty())
    for (sched::Step& s : out->steps)
      if (s.peer >= 0) s.peer = d.order[s.peer];
  out->rank = rank;
  return Status();
}

Status Planner::rounds(const sched::CollArgs& args, const Decision& d, std::vector<Round>* out,
                       bool* priced) const {
  const int p = ctx_.nranks;
  out->clear();
  if (priced) *priced = true;
  // Real schedules while they stay small (about 4 steps per chunk per rank), else the pattern.
  const uint64_t chunk = std::max<uint64_t>(1, d.chunkBytes);
  const uint64_t steps = 4ull * p * std::max<uint64_t>(p, messageBytes(args, p) / chunk);
  const bool exact =
      p <= kExactMaxRanks && (steps <= kExactMaxSteps || !hasPattern(args.coll, d.algo->name));
  if (exact) {
    std::vector<sched::Schedule> all(p);
    for (int r = 0; r < p; ++r) LOOM_CHECK(build(d, args, r, &all[r]));
    return roundsFromSchedules(all, out);
  }
  if (!hasPattern(args.coll, d.algo->name)) {
    if (priced) *priced = false;
    return Status();
  }
  PatternArgs pa;
  pa.args = args;
  pa.args.chunkBytes = d.chunkBytes;
  if (d.channels > 0) pa.args.channels = d.channels;
  pa.nranks = p;
  pa.order = d.order;
  pa.parts = d.parts.empty() ? ctx_.hostOf : d.parts;
  return patternRounds(d.algo->name, pa, out);
}

bool Planner::pipelined(const std::string& algo) { return pipelinedAlgo(algo); }

Status Planner::price(const sched::CollArgs& args, Decision* d) const {
  std::vector<Round> rs;
  bool priced = true;
  LOOM_CHECK(rounds(args, *d, &rs, &priced));
  if (!priced) {  // neither small enough to build nor a pattern
    d->predictedSec = -1;
    return Status();
  }
  PriceOpts opts;
  opts.algo = d->algo->name;
  opts.pipelined = pipelinedAlgo(d->algo->name);
  opts.collBytes = messageBytes(args, ctx_.nranks);
  d->predictedSec = model_->price(rs, &d->bottleneck, opts);
  return Status();
}

std::vector<Decision> Planner::enumerate(const sched::CollArgs& args,
                                         const std::string& only) const {
  std::vector<Decision> out;
  const int p = ctx_.nranks;
  const uint64_t bytes = messageBytes(args, p);
  std::vector<const algo::AlgoInfo*> algos;
  if (!only.empty())
    algos.push_back(algo::findAlgo(args.coll, only));
  else
    algos = algo::algosFor(args.coll);
  std::vector<std::vector<int>> orders = {{}};
  if (layoutFree(args.coll) && !isIdentity(topoOrder_)) orders.push_back(topoOrder_);
  for (const algo::AlgoInfo* a : algos) {
    if (!a) continue;
    std::vector<std::pair<Level, std::vector<int>>> levels = {{Level::kHost, {}}};
    if (hierarchical(a->name)) {
      levels.clear();
      std::vector<std::vector<int>> seen;
      for (Level l : {Level::kHost, Level::kLeaf, Level::kGroup}) {
        std::vector<int> parts = partitionAt(*model_, l);
        int n = numParts(parts);
        bool dup = false;
        for (auto& s : seen) dup = dup || numParts(s) == n;
        // One part (a one-host communicator): the hierarchy is its inner ring reduce-scatter and
        // all-gather, in loops of parts x chunk, a schedule of its own that measures apart from
        // the flat ring, so it is a candidate; every rank a part of its own is the flat
        // algorithm again, offered only when forced.
        const bool onePart = n == 1 && seen.empty() && l == Level::kHost;
        if (dup || ((n == p || (n == 1 && !onePart)) && !(only == a->name && seen.empty())))
          continue;
        seen.push_back(parts);
        levels.push_back({l, parts});
      }
    }
    std::vector<uint64_t> chunks = {ctx_.chunkBytes};
    if (pipelinedAlgo(a->name) && bytes > ctx_.chunkBytes)
      chunks = {ctx_.chunkBytes, ctx_.chunkBytes / 4, ctx_.chunkBytes * 4};  // ties: default
    // Multi-channel: one channel per GPU of a host (each NIC carries one), or two per GPU (shorter
    // pipeline stages); the builder orders ranks itself (rank order only). With one rank per
    // host it is the flat ring, offered only when forced.
    std::vector<int> channels = {0};
    const std::vector<std::vector<int>>* ords = &orders;
    static const std::vector<std::vector<int>> kRankOrder = {{}};
    if (multiChannel(a->name)) {
      const int b = smallestHost(ctx_.hostOf, p);
      if (b < 2 && only != a->name) continue;
      channels = {std::min(b, sched::kMaxChannels)};
      if (2 * b <= sched::kMaxChannels && b >= 2) channels.push_back(2 * b);
      ords = &kRankOrder;
    }
    for (auto& [lvl, parts] : levels)
      for (auto& order : *ords)
        for (int k : channels)
          for (uint64_t c : chunks) {
            Decision d;
            d.algo = a;
            d.order = order;
            d.level = lvl;
            d.parts = parts;
            d.chunkBytes = c;
            d.channels = k;
            out.push_back(d);
          }
  }
  return out;
}

std::vector<Decision> Planner::candidates(const sched::CollArgs& args) {
  std::vector<Decision> all = enumerate(args, "");
  std::vector<Decision> priced;
  for (Decision& d : all) {
    Status s = price(args, &d);
    if (!s.ok()) {
      LOOM_WARN(PLAN, "cannot price ", d.describe(), ": ", s.message());
      continue;
    }
    if (d.predictedSec >= 0) priced.push_back(std::move(d));
  }
  if (directFits(args)) priced.push_back(directDecision(args));
  std::stable_sort(priced.begin(), priced.end(), [](const Decision& a, const Decision& b) {
    return a.predictedSec < b.predictedSec;
  });
  return priced;
}

const Decision& Planner::choose(const sched::CollArgs& args, bool allowDirect) {
  std::lock_guard<std::mutex> lock(mu_);
  Key key{static_cast<int>(args.coll),
          args.count,
          static_cast<int>(args.dtype),
          args.root,
          args.inPlace,
          static_cast<int>(args.op),
          allowDirect};
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  const uint64_t bytes = messageBytes(args, ctx_.nranks);
  const bool direct = allowDirect && directFits(args);
  std::string source = "cost";
  std::string order;  // "rank" / "topo" from LOOM_ALGO=allreduce:ring/topo
  std::string only = over_.lookup(args.coll, bytes, &source, &order);
  if (only.empty()) {  // the tuning table, where it holds (a name it does not know: the model)
    only = tunedAlgo(args);
    if (only != "direct" && !algo::findAlgo(args.coll, only)) only.clear();
    source = only.empty() ? "cost" : "tuned";
  }
  if (only == "direct") {
    if (direct) return cache_[key] = decided(args, directDecision(args), source);
    // Not here (too large, no direct path, or the caller needs a schedule): the model decides.
    source = strCat("cost, ", source, "'s direct does not apply");
    only.clear();
  }
  if (!only.empty() && !algo::findAlgo(args.coll, only)) {
    // As NCCL: a forced choice that names nothing is an error, not a silent fallback.
    Decision none;
    none.source = strCat(source, " names '", only, "', which is not an algorithm of ",
                         sched::collName(args.coll));
    return cache_[key] = none;
  }
  std::vector<Decision> cands = enumerate(args, only);
  std::vector<Decision> kept;  // a forced ordering (none offered: topology order is rank order)
  for (Decision& d : cands)
    if (!order.empty() && d.order.empty() == (order == "rank")) kept.push_back(d);
  if (!kept.empty()) cands.swap(kept);
  Decision best;
  for (Decision& d : cands) {
    Status s = price(args, &d);
    if (!s.ok()) {
      LOOM_WARN(PLAN, "cannot price ", d.describe(), ": ", s.message());
      continue;
    }
    if (!best.algo ||
        (d.predictedSec >= 0 && (best.predictedSec < 0 || d.predictedSec < best.predictedSec)))
      best = d;
  }
  if (!best.algo && !cands.empty()) best = cands[0];
  if (only.empty() && direct) {
    // Without a calibrated price (no fit.direct.shm.*) the direct path keeps its measured rule:
    // it takes every all-reduce up to LOOM_SHM_DIRECT_BYTES.
    Decision d = directDecision(args);
    const bool fitted = ctx_.params.fit("direct", Transport::kShm) != nullptr;
    if (!fitted || !best.algo || best.predictedSec < 0 || d.predictedSec < best.predictedSec)
      best = d;
  }
  if (algo::algosFor(args.coll).size() == 1 && only.empty() && !direct) source = "only";
  return cache_[key] = decided(args, best, source);
}

Decision Planner::decided(const sched::CollArgs& args, Decision d, const std::string& source) {
  d.source = source;
  LOOM_INFO(PLAN, sched::collName(args.coll), " ", sizeStr(messageBytes(args, ctx_.nranks)), " ",
            dtypeName(args.dtype), " on ", ctx_.nranks, " ranks: ", d.describe(), " predicted ",
            d.predictedSec * 1e6, " us (", source,
            d.bottleneck.empty() ? "" : ", bottleneck " + d.bottleneck, ")");
  return d;
}

std::string Planner::explain(const sched::CollArgs& args) {
  const Decision chosen = choose(args);
  const int p = ctx_.nranks;
  const uint64_t bytes = messageBytes(args, p);
  std::ostringstream os;
  const topo::Topology* t = ctx_.topology;
  os << sched::collName(args.coll) << " " << sizeStr(bytes) << " " << dtypeName(args.dtype)
     << " on " << p << " ranks, " << numParts(ctx_.hostOf.empty() ? identityOrder(p) : ctx_.hostOf)
     << " hosts, fabric " << (t ? topo::fabricTypeName(t->cls.type) : "none") << ", between hosts "
     << transportName(ctx_.interHost) << "\n";
  os << "chosen: " << chosen.describe() << " (" << chosen.source << ")";
  if (chosen.predictedSec >= 0) os << ", predicted " << chosen.predictedSec * 1e6 << " us";
  os << "\n";
  const std::vector<Decision> cands = candidates(args);
  if (chosen.source == "tuned" && !cands.empty())
    os << "tuned: measured fastest by loom-plan --calibrate for this communicator's shape and size "
          "bucket (LOOM_PLAN_PARAMS tuned.*); the cost model alone would choose "
       << cands.front().describe() << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-42s %12s %10s %10s  %s\n", "candidate", "time(us)", "algbw",
                "busbw", "bottleneck");
  os << line;
  for (const Decision& d : cands) {
    double alg = d.predictedSec > 0 ? bytes / d.predictedSec / 1e9 : 0;
    std::snprintf(line, sizeof line, "  %-42s %12.2f %10.3f %10.3f  %s\n", d.describe().c_str(),
                  d.predictedSec * 1e6, alg, alg * busFactor(args.coll, p), d.bottleneck.c_str());
    os << line;
  }
  return os.str();
}

}  // namespace loom::plan
