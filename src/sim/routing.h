// Routing models of the simulator. A path is a list of (link, weight): weight 1 on every link for
// a single path, fractions when a flow is spread over several paths (packet spraying, Valiant's
// fluid spread over intermediate groups).
//   ecmp     one shortest path per (src, dst) pair, chosen hop by hop by a seeded hash; pairs keep
//            their path across messages (fixed 5-tuple), so collisions persist, as with RoCE.
//   spray    the flow is split evenly over all shortest paths at every switch (adaptive routing /
//            packet spraying as a fluid).
//   valiant  Dragonfly+: traffic between groups is spread evenly over every intermediate group
//            (two global hops); inside a group it stays minimal (sprayed).
//   ugal     Dragonfly+: per flow, minimal (sprayed) unless the busiest link of the minimal path,
//            weighted by hop count, is more loaded than the Valiant alternative (UGAL-L).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "sim/net.h"

namespace loom::sim {

enum class RoutingMode : uint8_t { kEcmp, kSpray, kValiant, kUgal };
const char* routingName(RoutingMode m);
Status parseRouting(const std::string& s, RoutingMode* out);

struct PathHop {
  int32_t link;
  double weight;
};

struct Path {
  std::vector<PathHop> hops;
  int switchHops = 0;  // switches crossed on the (longest) route: the latency class
  bool intraNode = false;
  bool nvlink = false;
};

class Router {
 public:
  Router(const Net* net, RoutingMode mode, uint64_t seed) : net_(net), mode_(mode), seed_(seed) {}
  RoutingMode mode() const { return mode_; }
  // Off: route() does not keep paths (for callers that keep their own, like the engine).
  void setCachePaths(bool on) { cachePaths_ = on; }
  // Path from GPU src to GPU dst. `linkLoad` (weights of active flows per link, may be null) is
  // read by UGAL. Minimal paths are cached per pair; cleared when the net changes.
  Status route(int srcGpu, int dstGpu, const double* linkLoad, Path* out);

  // Bundles (spray and Valiant; off by default). Parallel switch links with one capacity: a
  // switch's links up to the next tier, or a switch's links down from the tier above. A sprayed
  // flow that crosses one link of a bundle usually crosses all of them with the same weight (on a
  // fat-tree: every spine, every core), and then the bundle is one constraint: with bundles on,
  // such a path names only the bundle's first link (its representative) with that weight, so a
  // 3-level cross-pod path has ~70 hops instead of ~4,200, and the solver's answer is the same.
  // Where a path crosses a bundle unevenly (a failed link upstream, a partial candidate set) it
  // keeps its member hops and bundleViolated() turns true: mixing the two forms would not be
  // exact, so the caller must rerun without bundles (sim::simulate does).
  void setBundles(bool on);
  bool bundling() const { return bundles_; }
  bool bundleViolated() const { return violated_; }
  int numBundles() const { return static_cast<int>(bundleMembers_.size()); }
  // After a bundled run: every member link carried what its representative carried.
  void expandBundles(std::vector<double>* linkBytes) const;

 private:
  const std::vector<uint8_t>& distTo(int sw);  // hops from every switch to switch node `sw`
  Status switchPathEcmp(int from, int to, uint64_t key, std::vector<PathHop>* hops, int* nsw);
  Status switchPathSpray(int from, int to, double scale, std::unordered_map<int, double>* acc,
                         int* nsw);
  Status valiantSpray(int from, int to, int srcGroup, int dstGroup, double scale,
                      std::unordered_map<int, double>* acc, int* nsw);
  void checkVersion();
  void buildBundles();
  // The switch part of a spray / Valiant path between two leaves (bundled when bundles are on),
  // kept per leaf pair: every GPU pair between the same two leaves crosses the same switches.
  struct Middle {
    std::vector<PathHop> hops;
    int switchHops = 0;
    bool even = true;  // compress() succeeded (or bundles are off)
  };
  Status middle(int leafS, int leafD, bool crossGroup, const Middle** out);
  std::unordered_map<uint64_t, Middle> middle_;
  Middle spare_;  // a middle not kept (middle_ full)
  size_t middleHops_ = 0;
  static constexpr size_t kMaxMiddleHops = size_t{1} << 23;  // 128 MiB of hops
  bool compress(std::vector<PathHop>* hops);

  const Net* net_;
  RoutingMode mode_;
  uint64_t seed_;
  uint64_t version_ = ~0ull;
  bool cachePaths_ = true;
  std::unordered_map<int, std::vector<uint8_t>> dist_;
  // Per switch (index), the switches with a live link into it (CSR): distTo's BFS, without
  // walking NIC links and link records.
  std::vector<uint32_t> inOff_;
  std::vector<int32_t> inSw_;
  std::unordered_map<uint64_t, Path> cache_;
  std::vector<std::vector<int>> groupSwitches_;  // groups -> tier >= 2 switches (Valiant targets)
  bool bundles_ = false, violated_ = false;
  std::vector<int32_t> bundleOf_;                    // link -> bundle (-1: none)
  std::vector<std::vector<int32_t>> bundleMembers_;  // bundle -> links (first: representative)
  struct Seen {                                      // compress(): a bundle met on the path
    int32_t bundle;
    uint32_t count;
    double weight;
  };
  std::vector<Seen> seen_;
  std::vector<uint32_t> seenAt_;  // bundle -> 1 + index into seen_ (0: not met)
};

}  // namespace loom::sim
