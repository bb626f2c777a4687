// Planner: for each (collective, bytes, dtype, communicator) picks the algorithm, the rank
// ordering and the pipeline chunk with the lowest predicted time on the communicator's topology
// (cost_model.h), caches the decision, obeys LOOM_ALGO / LOOM_TUNE (overrides.h), and explains why.
//
// Candidates: every registered algorithm of the collective x orderings {rank order, topology order
// (group, leaf, host)} for layout-free collectives (allreduce, broadcast, reduce) x hierarchy
// levels {host, leaf, group} for the hierarchical algorithms x chunk sizes {default/4, default, 4 x
// default} for pipelined ones, and the one-host direct path for small all-reduces where the
// communicator has one (PlannerContext::directBytes). A measured tuning table in the parameters
// (CostParams::tuned) picks the algorithm instead of the model for a communicator of exactly the
// calibrated shape; the model still picks its variant. Up to kExactMaxRanks ranks a candidate is
// priced from the real schedules of all ranks; above that from the algorithm's pattern
// (patterns.h).
//
// Use: Planner pl(ctx); const Decision& d = pl.choose(args); pl.build(d, args, rank, &schedule).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "algo/registry.h"
#include "plan/cost_model.h"
#include "plan/ordering.h"
#include "plan/overrides.h"

namespace loom::plan {

constexpr int kExactMaxRanks = 32;
constexpr uint64_t kExactMaxSteps = 1 << 18;  // above: price from the pattern (planning time)

struct PlannerContext {
  int nranks = 1;
  std::vector<int> hostOf;  // rank -> host id (Topology::hosts index when `topology` is set)
  Transport interHost = Transport::kTcp;     // between hosts; shm inside a host
  const topo::Topology* topology = nullptr;  // optional: fabric for contention and path classes
  CostParams params;
  // Overrides; by default read from LOOM_ALGO / LOOM_TUNE / LOOM_CHUNK_BYTES, and `params`
  // updated from LOOM_PLAN_PARAMS.
  bool readEnv = true;
  std::string algo, tune;
  uint64_t chunkBytes = 0;  // 0: LOOM_CHUNK_BYTES
  // The communicator's one-host collective primitive (transport::HostCollective): all-reduces and
  // barriers up to this many bytes may take the "direct" algorithm over it, a candidate the
  // planner prices; 0: there is none.
  uint64_t directBytes = 0;
  // All ranks on one host: the CPUs they may run on (0: unknown, or several hosts). With more
  // ranks than that, the cost model shares those cores among them (CostParams::cores) unless the
  // parameters set `cores` themselves.
  int hostCpus = 0;
};

struct Decision {
  const algo::AlgoInfo* algo = nullptr;
  std::vector<int> order;  // position -> rank; empty = rank order
  std::vector<int> parts;  // rank -> part id the hierarchical builder composes over; empty = hosts
  Level level = Level::kHost;
  uint64_t chunkBytes = 0;
  int channels = 0;  // multi-channel algorithms (ring_rail): CollArgs::channels; 0 = the default
  double predictedSec = 0;  // < 0: not priced (forced algorithm without a cost)
  std::string source;       // "cost", "LOOM_ALGO", "LOOM_TUNE", "only"
  std::string bottleneck;
  bool direct = false;           // the one-host "direct" algorithm (priced by priceDirect)
  std::string describe() const;  // "hier(level=leaf,order=topo,chunk=512k)", "direct"
};

class Planner {
 public:
  explicit Planner(const PlannerContext& ctx);
  // Status of the constructor (a bad LOOM_ALGO / LOOM_TUNE / LOOM_PLAN_PARAMS value); choose()
  // still works, ignoring the overrides.
  const Status& status() const { return status_; }

  // With `allowDirect` false the direct path is no candidate (a caller that needs a schedule).
  const Decision& choose(const sched::CollArgs& args, bool allowDirect = true);
  // Every priced candidate by the cost model, cheapest first (the chosen one is not necessarily
  // first when forced or tuned).
  std::vector<Decision> candidates(const sched::CollArgs& args);
  std::string explain(const sched::CollArgs& args);
  // This rank's schedule for `d`: the builder runs over positions (order), with the hierarchy's
  // parts as hosts and d.chunkBytes, and peers are mapped back to communicator ranks.
  Status build(const Decision& d, const sched::CollArgs& args, int rank,
               sched::Schedule* out) const;

  // The rounds the cost model prices `d` by (real schedules, or the algorithm's pattern for
  // communicators too big to build); `priced` false when neither is possible.
  Status rounds(const sched::CollArgs& args, const Decision& d, std::vector<Round>* out,
                bool* priced = nullptr) const;
  // Whether `algo` pipelines chunks (its reductions overlap its transfers).
  static bool pipelined(const std::string& algo);

  static uint64_t messageBytes(const sched::CollArgs& args, int nranks);
  static double busFactor(sched::CollType coll, int nranks);
  const CostModel& model() const { return *model_; }

 private:
  Status price(const sched::CollArgs& args, Decision* d) const;
  std::vector<Decision> enumerate(const sched::CollArgs& args, const std::string& only) const;
  bool directFits(const sched::CollArgs& args) const;
  // `d` with its source, logged (INFO, PLAN).
  Decision decided(const sched::CollArgs& args, Decision d, const std::string& source);
  Decision directDecision(const sched::CollArgs& args) const;
  // The tuning table's algorithm for `args` ("" unless the communicator is the calibrated shape).
  std::string tunedAlgo(const sched::CollArgs& args) const;

  PlannerContext ctx_;
  Status status_;
  Overrides over_;
  std::unique_ptr<CostModel> model_;
  std::vector<int> topoOrder_;
  int tunedTransport_ = -1;  // Transport the tuning table may apply to (-1: none)
  std::mutex mu_;
  using Key = std::tuple<int, uint64_t, int, int, bool, int, bool>;
  std::map<Key, Decision> cache_;
};

}  // namespace loom::plan
