// FabricBuilder: collects nodes and links in any order and produces a Fabric that keeps the
// invariants of topology.h (switches first, dense ids, adjacency lists, link GB/s).
#pragma once

#include <string>
#include <vector>

#include "topo/topology.h"

namespace loom::topo {

class FabricBuilder {
 public:
  // Returns a provisional id, valid for addLink() on this builder.
  int addNode(NodeKind kind, uint64_t guid, std::string desc, int nports, int lid = 0);
  // width x speed sets gbps; returns the link index.
  int addLink(int a, int portA, int b, int portB, int width, const std::string& speed);
  FabricNode& node(int id) { return nodes_[id]; }
  Link& link(int i) { return links_[i]; }
  int numNodes() const { return static_cast<int>(nodes_.size()); }
  int numLinks() const { return static_cast<int>(links_.size()); }
  void reserve(size_t nodes, size_t links);
  // Moves switches to the front (stable), renumbers link ends, builds adjacency. `newId`, when
  // given, receives the final id of each provisional id.
  Fabric finish(std::string source, std::vector<int>* newId = nullptr);

 private:
  std::vector<FabricNode> nodes_;
  std::vector<Link> links_;
};

}  // namespace loom::topo
