#include "sim/net.h"

namespace loom::sim {

const char* linkLevelName(LinkLevel l) {
  switch (l) {
    case LinkLevel::kNvlink:
      return "nvlink";
    case LinkLevel::kPcie:
      return "pcie";
    case LinkLevel::kNic:
      return "nic";
    case LinkLevel::kTier1:
      return "tier1";
    case LinkLevel::kTier2:
      return "tier2";
    case LinkLevel::kGlobal:
      return "global";
    case LinkLevel::kOther:
      return "other";
  }
  return "?";
}

int Net::addNode(NodeKind kind, int host, int tier, int group, std::string name) {
  Node n;
  n.kind = kind;
  n.host = host;
  n.tier = tier;
  n.group = group;
  n.name = std::move(name);
  nodes_.push_back(std::move(n));
  out_.emplace_back();
  in_.emplace_back();
  switchIndex_.push_back(-1);
  ++version_;
  return static_cast<int>(nodes_.size()) - 1;
}

int Net::addSwitch(const std::string& name, int tier, int group) {
  int id = addNode(NodeKind::kSwitch, -1, tier, group, name);
  switchIndex_[id] = static_cast<int32_t>(switches_.size());
  switches_.push_back(id);
  if (group > maxGroup_) maxGroup_ = group;
  return id;
}

int Net::addLinkPair(int a, int b, double gbps, LinkLevel level) {
  int id = static_cast<int>(links_.size());
  for (int k = 0; k < 2; ++k) {
    Link l;
    l.from = k == 0 ? a : b;
    l.to = k == 0 ? b : a;
    l.bytesPerSec = gbps * 1e9;
    l.level = level;
    links_.push_back(l);
    out_[l.from].push_back(id + k);
    in_[l.to].push_back(id + k);
  }
  ++version_;
  return id;
}

Status Net::addHost(const std::vector<int>& nicLeaf, int* hostIndex,
                    const std::vector<double>& nicGBps) {
  const NodeParams& p = params_;
  if (p.gpusPerNode <= 0 || p.nvlinkDomain <= 0)
    return invalidArgument("sim::Net: gpusPerNode and nvlinkDomain must be > 0");
  if (nicLeaf.empty()) return invalidArgument("sim::Net::addHost: a host needs at least one NIC");
  if (!nicGBps.empty() && nicGBps.size() != nicLeaf.size())
    return invalidArgument("sim::Net::addHost: ", nicGBps.size(), " NIC rates for ", nicLeaf.size(),
                           " NICs");
  for (int leaf : nicLeaf) {
    if (leaf >= numNodes() || (leaf >= 0 && nodes_[leaf].kind != NodeKind::kSwitch))
      return invalidArgument("sim::Net::addHost: NIC leaf ", leaf, " is not a switch");
  }
  int h = numHosts();
  std::string hn = strCat("h", h);
  HostInfo hi;
  hi.firstGpu = numGpus();
  hi.rootNode = addNode(NodeKind::kHostRoot, h, 0, -1, hn + "/root");
  for (size_t n = 0; n < nicLeaf.size(); ++n) {
    int nic = addNode(NodeKind::kNic, h, 0, -1, strCat(hn, "/nic", n));
    hi.nicNode.push_back(nic);
    hi.nicLeaf.push_back(nicLeaf[n]);
  }
  nicUp_.emplace_back(nicLeaf.size(), -1);
  nicDown_.emplace_back(nicLeaf.size(), -1);
  for (size_t n = 0; n < nicLeaf.size(); ++n) {
    if (nicLeaf[n] < 0) continue;
    int l = addLinkPair(hi.nicNode[n], nicLeaf[n], nicGBps.empty() ? p.nicGBps : nicGBps[n],
                        LinkLevel::kNic);
    nicUp_[h][n] = l;
    nicDown_[h][n] = l + 1;
  }
  hosts_.push_back(hi);
  for (int g = 0; g < p.gpusPerNode; ++g) {
    int gpu = numGpus();
    int node = addNode(NodeKind::kGpu, h, 0, -1, strCat(hn, "/gpu", g));
    hosts_[h].gpuNode.push_back(node);
    gpuNode_.push_back(node);
    gpuHost_.push_back(h);
    GpuLinks gl;
    gl.domain = gpu / p.nvlinkDomain;
    if (gl.domain >= static_cast<int>(domainSwitch_.size())) {
      domainSwitch_.push_back(addNode(NodeKind::kNvSwitch, p.nvlinkDomain <= p.gpusPerNode ? h : -1,
                                      0, -1, strCat("nvs", gl.domain)));
    }
    int l = addLinkPair(node, domainSwitch_[gl.domain], p.nvlinkGBps, LinkLevel::kNvlink);
    gl.nvUp = l;
    gl.nvDown = l + 1;
    int nic = static_cast<int>(static_cast<int64_t>(g) * nicLeaf.size() / p.gpusPerNode);
    l = addLinkPair(node, hosts_[h].nicNode[nic], p.pcieGBps, LinkLevel::kPcie);
    gl.pcieToNic = l;
    gl.pcieFromNic = l + 1;
    l = addLinkPair(node, hosts_[h].rootNode, p.pcieGBps, LinkLevel::kPcie);
    gl.pcieToRoot = l;
    gl.pcieFromRoot = l + 1;
    gpuLinks_.push_back(gl);
  }
  if (hostIndex) *hostIndex = h;
  return Status();
}

int Net::nicOfGpu(int gpu) const {
  const HostInfo& hi = hosts_[gpuHost_[gpu]];
  return static_cast<int>(static_cast<int64_t>(gpu - hi.firstGpu) * hi.nicNode.size() /
                          params_.gpusPerNode);
}

void Net::setSwitchUp(int node, bool up) {
  for (int l : out_[node]) links_[l].up = up;
  for (int l : in_[node]) links_[l].up = up;
  ++version_;
}

void Net::scaleLevel(LinkLevel level, double factor) {
  for (Link& l : links_)
    if (l.level == level) l.bytesPerSec *= factor;
  ++version_;
}

int Net::addHostShared(int host, double gbps) {
  const int root = hosts_[host].rootNode;
  hosts_[host].sharedLink = addLinkPair(root, root, gbps, LinkLevel::kOther);
  return hosts_[host].sharedLink;
}

std::string Net::linkName(int id) const {
  const Link& l = links_[id];
  return strCat(nodes_[l.from].name, "->", nodes_[l.to].name, " (", linkLevelName(l.level), ")");
}

}  // namespace loom::sim
