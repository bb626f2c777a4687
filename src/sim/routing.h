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

 private:
  const std::vector<uint8_t>& distTo(int sw);  // hops from every switch to switch node `sw`
  Status switchPathEcmp(int from, int to, uint64_t key, std::vector<PathHop>* hops, int* nsw);
  Status switchPathSpray(int from, int to, double scale, std::unordered_map<int, double>* acc,
                         int* nsw);
  Status valiantSpray(int from, int to, int srcGroup, int dstGroup, double scale,
                      std::unordered_map<int, double>* acc, int* nsw);
  void checkVersion();

  const Net* net_;
  RoutingMode mode_;
  uint64_t seed_;
  uint64_t version_ = ~0ull;
  bool cachePaths_ = true;
  std::unordered_map<int, std::vector<uint8_t>> dist_;
  std::unordered_map<uint64_t, Path> cache_;
  std::vector<std::vector<int>> groupSwitches_;  // groups -> tier >= 2 switches (Valiant targets)
};

}  // namespace loom::sim
