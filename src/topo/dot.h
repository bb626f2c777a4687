// Graphviz DOT of a classified fabric. Switches are drawn, hosts are folded into a count on their
// leaf (a fabric of thousands of hosts stays readable); Dragonfly+ groups become clusters and
// global links are drawn in a separate colour; fat-tree levels become ranks.
#pragma once

#include <string>

#include "topo/topology.h"

namespace loom::topo {

struct DotOptions {
  bool hosts = false;  // draw every CA as its own node
};

std::string toDot(const Topology& t, const DotOptions& opts = {});

}  // namespace loom::topo
