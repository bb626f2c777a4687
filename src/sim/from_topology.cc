#include "sim/from_topology.h"

#include "topo/classify.h"

namespace loom::sim {
namespace {

LinkLevel levelOf(const topo::Link& l) {
  if (l.global) return LinkLevel::kGlobal;
  if (l.level == 1) return LinkLevel::kTier1;
  if (l.level == 2) return LinkLevel::kTier2;
  return LinkLevel::kOther;
}

}  // namespace

Status netFromTopology(const topo::Topology& t, Net* out) {
  TopoMap m;
  return netFromTopology(t, out, &m);
}

Status netFromTopology(const topo::Topology& in, Net* out, TopoMap* map) {
  if (out->numNodes() != 0) return invalidArgument("sim::netFromTopology: output net not empty");
  // Levels, groups and hosts come from classify(); run it on a copy when the input lacks them.
  bool classified = in.cls.type != topo::FabricType::kNone;
  topo::Topology copy;
  if (!classified) {
    copy = in;
    topo::classify(&copy);
  }
  const topo::Topology& t = classified ? in : copy;
  const topo::Fabric& f = t.fabric;
  map->netNode.assign(f.nodes.size(), -1);
  map->netLink.assign(f.links.size(), -1);
  for (int i = 0; i < f.numNodes(); ++i) {
    const topo::FabricNode& n = f.nodes[i];
    if (n.kind != topo::NodeKind::kSwitch) continue;
    int tier = n.level > 0 ? n.level : 1;
    map->netNode[i] = out->addSwitch(n.desc.empty() ? strCat("sw", i) : n.desc, tier, n.group);
  }
  for (size_t i = 0; i < f.links.size(); ++i) {
    const topo::Link& l = f.links[i];
    int a = map->netNode[l.a], b = map->netNode[l.b];
    if (a < 0 || b < 0) continue;  // host link: made with the host below
    map->netLink[i] = out->addLinkPair(a, b, l.gbps, levelOf(l));
    if (!l.up) {
      out->setLinkUp(map->netLink[i], false);
      out->setLinkUp(map->netLink[i] + 1, false);
    }
  }
  if (t.hosts.empty()) return invalidArgument("sim: the topology has no hosts");
  for (size_t h = 0; h < t.hosts.size(); ++h) {
    const topo::Host& host = t.hosts[h];
    std::vector<int> leaves;
    std::vector<double> rates;
    for (const topo::Nic& nic : host.nics) {
      int leaf = -1;
      double gbps = out->params().nicGBps;
      if (nic.fabricNode >= 0 && nic.fabricNode < f.numNodes()) {
        for (int li : f.nodes[nic.fabricNode].links) {
          const topo::Link& l = f.links[li];
          int peer = l.peer(nic.fabricNode);
          if (f.isSwitch(peer) && l.up) {
            leaf = map->netNode[peer];
            gbps = l.gbps;
            break;
          }
        }
      }
      leaves.push_back(leaf);
      rates.push_back(gbps);
    }
    if (leaves.empty())
      return invalidArgument("sim: host ", host.name, " (", h, ") has no NIC in the fabric");
    LOOM_CHECK(out->addHost(leaves, nullptr, rates));
  }
  return Status();
}

}  // namespace loom::sim
