// Topology-aware rank orderings and partitions. The order is a property of the plan, not of the
// user's rank numbering: a ring or tree is built over positions, and position v is rank order[v].
//   topologyOrder: ranks sorted by (Dragonfly+ group, leaf switch, host, rank), so a ring visits
//     every host, leaf and group once and crosses each oversubscribed uplink or global link as
//     few times as possible (once per direction per boundary), and low butterfly steps and tree
//     edges stay inside hosts and leaves.
//   partitionAt: the part each rank belongs to at one level (host, leaf or group), the "node"
//     a hierarchical algorithm composes over.
#pragma once

#include <string>
#include <vector>

#include "plan/cost_model.h"

namespace loom::plan {

enum class Level : int { kHost = 0, kLeaf = 1, kGroup = 2 };
const char* levelName(Level l);

std::vector<int> identityOrder(int p);
std::vector<int> topologyOrder(const CostModel& model);
bool isIdentity(const std::vector<int>& order);

// Part id per rank at `level`; ranks without fabric information fall back to their host.
std::vector<int> partitionAt(const CostModel& model, Level level);
// Number of distinct parts and the smallest part size.
int numParts(const std::vector<int>& parts, int* smallest = nullptr);

}  // namespace loom::plan
