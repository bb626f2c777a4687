#include "topo/fabric_builder.h"

#include <utility>

namespace loom::topo {

int FabricBuilder::addNode(NodeKind kind, uint64_t guid, std::string desc, int nports, int lid) {
  FabricNode n;
  n.kind = kind;
  n.guid = guid;
  n.desc = std::move(desc);
  n.nports = nports;
  n.lid = lid;
  if (kind != NodeKind::kSwitch) {
    n.level = 0;
    n.role = Role::kHost;
  }
  nodes_.push_back(std::move(n));
  return static_cast<int>(nodes_.size()) - 1;
}

int FabricBuilder::addLink(int a, int portA, int b, int portB, int width,
                           const std::string& speed) {
  Link l;
  l.a = a;
  l.b = b;
  l.portA = portA;
  l.portB = portB;
  l.width = width;
  l.speed = speed;
  l.gbps = linkGBps(width, speed);
  links_.push_back(std::move(l));
  return static_cast<int>(links_.size()) - 1;
}

void FabricBuilder::reserve(size_t nodes, size_t links) {
  nodes_.reserve(nodes);
  links_.reserve(links);
}

Fabric FabricBuilder::finish(std::string source, std::vector<int>* newId) {
  Fabric f;
  f.source = std::move(source);
  const int n = numNodes();
  std::vector<int> map(n);
  int next = 0;
  for (int i = 0; i < n; ++i) {
    if (nodes_[i].kind == NodeKind::kSwitch) map[i] = next++;
  }
  f.numSwitches = next;
  for (int i = 0; i < n; ++i) {
    if (nodes_[i].kind != NodeKind::kSwitch) map[i] = next++;
  }
  f.nodes.resize(n);
  for (int i = 0; i < n; ++i) f.nodes[map[i]] = std::move(nodes_[i]);
  f.links = std::move(links_);
  for (Link& l : f.links) {
    l.a = map[l.a];
    l.b = map[l.b];
  }
  f.rebuildAdjacency();
  nodes_.clear();
  links_.clear();
  if (newId) *newId = std::move(map);
  return f;
}

}  // namespace loom::topo
