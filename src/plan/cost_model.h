// Cost model: prices a collective as a sequence of rounds of concurrent flows on a fabric.
//
// A Round is a set of flows (src rank, dst rank, bytes) that run at the same time, repeated
// `repeat` times. Its time is
//     max over ranks of the per-message latency of the messages it sends (by path class)
//   + max over shared resources of bytes crossing it / its capacity (contention)
//   + the longest single flow at its transport's rate and the local reductions.
// Resources: each NIC (send and receive side), each leaf switch's uplinks (out and in), each
// Dragonfly+ group pair's global links (per direction), each host's memory (shared memory flows).
// So a step in which every host of a group talks to the same remote group is throttled by that
// pair's global links, and a leaf-ordered ring that leaves each leaf once is not.
//
// Rounds come from real Schedules (roundsFromSchedules: every message gets the level of the
// longest chain of messages before it, through dependencies, matching and FIFO order on a pair)
// or, for communicators too big to materialise every rank's schedule, from the algorithm's
// pattern (patterns.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "sched/schedule.h"
#include "topo/topology.h"

namespace loom::plan {

enum class Transport : uint8_t { kShm = 0, kTcp = 1, kNet = 2 };  // kNet: RDMA (verbs / UCX)
const char* transportName(Transport t);

// Path classes, cheapest first.
enum class PathKind : uint8_t { kLocal = 0, kLeaf = 1, kSpine = 2, kGlobal = 3, kFlat = 4 };
const char* pathKindName(PathKind k);

// What the alpha-beta-gamma rounds do not see of one algorithm's implementation on one
// transport, as NCCL's tuner keeps a base latency and a bandwidth ratio per algorithm and protocol:
// a fixed cost per call (schedule lookup, executor set-up), a cost per round beyond the message
// latency (executor step bookkeeping), a further cost per round for each time its active ranks
// oversubscribe the shared cores (waking ranks that gave their core away), and the fraction of
// the modelled bandwidth and reduction rate the implementation reaches (extra copies through
// scratch, staging). Measured by `loom-plan --calibrate`; the identity when absent.
struct AlgoFit {
  double baseUs = 0, roundUs = 0, wakeUs = 0, bwEff = 1;
};

// Latency in microseconds, bandwidth in GB/s (1e9 bytes/s).
struct CostParams {
  double shmAlphaUs = 2.0, shmGBps = 6.0, hostMemGBps = 12.0;
  double tcpAlphaUs = 25.0, tcpGBps = 1.5;
  double netAlphaUs = 1.5, switchHopUs = 0.15, netGBps = 25.0;  // RDMA; netGBps when no fabric
  double reduceGBps = 8.0;                                      // local reduction (gamma)
  // shm's single-copy protocol (Cross Memory Attach) for messages of at least shmCmaBytes, at
  // shmCmaGBps (0: none, every shm message goes through the copy ring at shmGBps), as NCCL prices
  // its protocols apart. The planner takes the threshold and whether CMA is on from
  // LOOM_SHM_CMA_THRESHOLD / LOOM_SHM_CMA.
  double shmCmaGBps = 0, shmCmaBytes = 65536;
  // CPU cores that all ranks of the communicator share (a one-machine job over shm, or over
  // loopback tcp as in the calibration); 0: every rank has a core of its own (multi-host jobs).
  // With it the CPU work of a round (the CPU share of its message latencies, copies, reductions,
  // wake-ups) of all its ranks is spread over this many cores.
  double cores = 0;
  // With `cores`: the fraction of a message's latency over shm / over tcp that is CPU work of the
  // shared cores (1: a round's latencies of all its ranks are spread over the cores, so a round
  // of 8 ranks on 2 cores costs 4 latencies), the rest waiting that overlaps other ranks' work
  // (0: a round costs its ranks' longest latency whatever the cores, as the simulator models
  // latency). `loom-plan --calibrate` fits each from {1, 0}.
  double shmAlphaCpu = 1, tcpAlphaCpu = 1;
  // Two-level per-message latency and cache-dependent bandwidth of the one-machine paths (shm, and
  // tcp when it is loopback as in the calibration): a message of more than xEagerBytes pays
  // xBigAlphaUs on top of alpha (the sliced path of the transport, a receiver that stopped
  // spinning), and a message of at most xCacheBytes moves at xCacheGBps instead of xGBps (source
  // and destination still in the cores' caches). xBigAlphaUs = 0 and xCacheGBps = 0: one level.
  double shmEagerBytes = 1024, shmBigAlphaUs = 0, shmCacheBytes = 262144, shmCacheGBps = 0;
  double tcpEagerBytes = 1024, tcpBigAlphaUs = 0, tcpCacheBytes = 262144, tcpCacheGBps = 0;
  // What xCacheBytes is compared with: 0, the message; 1, the collective's footprint on the
  // machine (its bytes times the ranks that share the host's caches: the ranks of the host over
  // shm, all ranks over tcp when they share `cores`). A ring's 32 KiB chunks of a 64 MiB vector
  // stream from memory, and a 128 KiB all-reduce of 4 ranks stays in cache whatever its messages.
  double shmCacheFootprint = 0, tcpCacheFootprint = 0;
  // Per "algorithm.transport" (transport: shm when every rank is on one host, else the
  // inter-host transport), written as fit.ring.shm.baseUs=..., fit.ring.shm.roundUs=...,
  // fit.ring.shm.wakeUs=..., fit.ring.shm.bwEff=...
  std::map<std::string, AlgoFit> fits;
  const AlgoFit* fit(const std::string& algo, Transport t) const;
  // Empirical tuning table (as Open MPI's coll/tuned dynamic rules): the all-reduce algorithm
  // measured fastest by `loom-plan --calibrate` per "transport.ranks" and size bucket (upper bound
  // in bytes, inclusive; a bucket starts above the previous one), written as
  // tuned.shm.4.98304=tree. The planner follows it only for a communicator shaped exactly as the
  // calibrated one (same transport, rank count, one host for shm, one rank per host for tcp, no
  // fabric) and sizes up to the last bucket; the cost model decides everywhere else, and in a
  // bucket named "model" (a table that overrides the model only where measurements disagree).
  std::map<std::string, std::map<uint64_t, std::string>> tuned;
  // The tuned algorithm for (transport, ranks, bytes), "" when the table does not cover it.
  std::string tunedAlgo(Transport t, int nranks, uint64_t bytes) const;
  std::string toString() const;
  // "key=value,key=value" or a JSON object with the same keys; unknown keys are errors.
  static Status parse(const std::string& text, CostParams* out);
};

struct Flow {
  int src = 0, dst = 0;
  uint64_t bytes = 0;
  // Step::channel: a rank's messages of one channel in a round pay their latencies one after
  // another; those of different channels overlap (separate connections).
  int channel = 0;
};

struct Round {
  std::vector<Flow> flows;
  uint64_t repeat = 1;
  uint64_t reduceBytes = 0;  // largest per-rank local reduction in the round
  uint64_t reduceSum = 0;    // all ranks' local reductions in the round (0: not counted)
};

// Where each rank is, and how pairs talk.
struct Placement {
  int nranks = 1;
  std::vector<int> hostOf;   // rank -> host id (Topology::hosts index when a topology is given)
  std::vector<int> localOf;  // rank -> index among the ranks of its host
  Transport interHost = Transport::kTcp;
  const topo::Topology* topology = nullptr;  // optional fabric
};

struct RoundCost {
  double latency = 0, bandwidth = 0, compute = 0;  // seconds
  int activeRanks = 0;                             // ranks that send or receive in the round
  // With `cores`: all CPU work of the round (every rank's copies and reductions) over the cores,
  // the floor under any overlap of transfers and reductions (0 without `cores`).
  double cpuBusy = 0;
  std::string bottleneck;  // busiest resource, readable
  double total() const { return latency + bandwidth + compute; }
};

// How one algorithm's rounds add up: `pipelined` algorithms (ring, trees, hierarchies) reduce one
// chunk while the next is in flight, so a round costs the larger of its transfer and its
// reduction, not their sum; `algo` selects the AlgoFit.
struct PriceOpts {
  std::string algo;
  bool pipelined = false;
  uint64_t collBytes = 0;  // the collective's bytes (for xCacheFootprint); 0: not known
};

class CostModel {
 public:
  CostModel(const Placement& place, const CostParams& params);

  PathKind pathKind(int a, int b) const;
  double alpha(int a, int b, uint64_t bytes = 0) const;  // seconds per message
  // Single-flow rate cap of a message of `bytes` in a collective of `collBytes` (0: not known).
  double flowGBps(int a, int b, uint64_t bytes = 0, uint64_t collBytes = 0) const;
  // The CPU fraction of a message's latency from a to b (shmAlphaCpu / tcpAlphaCpu; 1 on RDMA).
  double alphaCpu(int a, int b) const;
  RoundCost roundCost(const Round& r, uint64_t collBytes = 0) const;
  // Sum over rounds (times repeat); `worst` gets the bottleneck of the most expensive round.
  double price(const std::vector<Round>& rounds, std::string* worst = nullptr,
               const PriceOpts& opts = PriceOpts()) const;
  // The transport an AlgoFit is keyed by: shm when every rank is on one host.
  Transport fitTransport() const;
  // The parts of a price that the AlgoFit scales, for calibration: rounds (what roundUs
  // multiplies), rounds times the cores' oversubscription beyond 1 (wakeUs) and the transfer +
  // reduction seconds (what bwEff divides); the rest (message latency) is `fixed`.
  struct Terms {
    double fixed = 0, rounds = 0, wakes = 0, transfer = 0;
  };
  Terms terms(const std::vector<Round>& rounds, bool pipelined, uint64_t collBytes = 0) const;

  // The one-host "direct" algorithm (transports/shm/direct.h) for an all-reduce of `bytes`: every
  // rank copies its contribution into its slot, waits for every other slot and reduces all p slots.
  // Terms: `rounds` counts the p - 1 peers a rank waits for (roundUs), `wakes` the cores'
  // oversubscription beyond 1, `transfer` the copy and the p-slot reduction of all ranks spread
  // over the cores (what bwEff divides). Priced with the "direct" AlgoFit.
  Terms directTerms(uint64_t bytes) const;
  double priceDirect(uint64_t bytes) const;

  int leafOfRank(int r) const { return leaf_[r]; }
  int groupOfRank(int r) const { return group_[r]; }
  const Placement& placement() const { return place_; }
  const CostParams& params() const { return params_; }

 private:
  void addResource(const std::string& name, double gbps, int* id);
  Placement place_;
  CostParams params_;
  std::vector<int> nic_, leaf_, group_;  // per rank: NIC resource base, leaf switch, group
  std::vector<double> cap_;              // per resource, bytes/s
  std::vector<int> onHost_;              // per rank: ranks on its host
  std::vector<std::string> resName_;
  std::vector<int> leafUp_;                     // per leaf index: out resource (in = out + 1)
  std::unordered_map<int64_t, int> globalRes_;  // (ga * G + gb) -> resource
  std::vector<int> hostMem_;                    // per host: resource
  int numGroups_ = 0;
  double nicGBps_ = 0;
};

// Rounds of real schedules (one per rank, all built for the same collective).
Status roundsFromSchedules(const std::vector<sched::Schedule>& all, std::vector<Round>* out);

}  // namespace loom::plan
