// The simulator's link graph: directed links with a capacity, between GPUs, NVSwitch domains,
// NICs and fabric switches. It is an internal, flattened view built from a topo::Topology (see
// from_topology.h) or by hand in tests; the fabric description itself lives in src/topo.
//
// Inside a host: every GPU has an NVLink pair to its NVLink domain's switch (a domain may span
// hosts, NVL72 style), a PCIe pair to its NIC (GPU g uses NIC g * nics / gpus) and a PCIe pair to
// the host root (the path between GPUs of different NVLink domains on one host). Every NIC has an
// injection pair to the leaf switch it plugs into. Between switches, links come in pairs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace loom::sim {

// What a link connects; utilisation is reported per level.
enum class LinkLevel : uint8_t {
  kNvlink,  // GPU <-> NVSwitch
  kPcie,    // GPU <-> NIC, GPU <-> host root
  kNic,     // NIC <-> leaf switch (injection)
  kTier1,   // leaf <-> spine (fat-tree), leaf <-> spine inside a Dragonfly+ group
  kTier2,   // spine <-> core (3-level fat-tree)
  kGlobal,  // Dragonfly+ spine <-> spine of another group
  kOther,
};
constexpr int kNumLinkLevels = 7;
const char* linkLevelName(LinkLevel l);

enum class NodeKind : uint8_t { kGpu, kNvSwitch, kHostRoot, kNic, kSwitch };

struct Node {
  NodeKind kind = NodeKind::kSwitch;
  int32_t host = -1;   // owning host (-1 for fabric switches and multi-host NVLink domains)
  int32_t tier = 0;    // switches: 1 leaf, 2 spine, 3 core
  int32_t group = -1;  // switches: Dragonfly+ group or fat-tree pod (-1 unknown)
  std::string name;
};

struct Link {
  int32_t from = -1;
  int32_t to = -1;
  double bytesPerSec = 0;
  LinkLevel level = LinkLevel::kOther;
  bool up = true;
};

// Per-host hardware, defaults as in an 8-GPU H100/H200 box with 8 x 400 Gb/s NICs.
struct NodeParams {
  int gpusPerNode = 8;
  int nicsPerNode = 8;
  int nvlinkDomain = 8;     // GPUs per NVLink domain (a multiple or divisor of gpusPerNode)
  double nvlinkGBps = 450;  // per GPU per direction
  double pcieGBps = 64;     // per GPU per direction (Gen5 x16)
  double nicGBps = 50;      // per NIC per direction (400 Gb/s)
};

struct HostInfo {
  int32_t firstGpu = 0;          // GPU g of this host is global GPU firstGpu + g
  std::vector<int32_t> gpuNode;  // node ids
  std::vector<int32_t> nicNode;  // node ids
  std::vector<int32_t> nicLeaf;  // switch node each NIC plugs into (-1: none)
  int32_t rootNode = -1;
  int32_t sharedLink = -1;  // addHostShared(): crossed by every flow between GPUs of the host
};

class Net {
 public:
  explicit Net(const NodeParams& p = NodeParams()) : params_(p) {}

  const NodeParams& params() const { return params_; }
  // A fabric switch; returns its node id.
  int addSwitch(const std::string& name, int tier, int group);
  // Two directed links a->b and b->a of `gbps` GB/s each; returns the id of a->b (b->a is id+1).
  int addLinkPair(int a, int b, double gbps, LinkLevel level);
  // A host with params().gpusPerNode GPUs and one NIC per entry of nicLeaf (a switch node id, or
  // -1 for a NIC that is not cabled). nicGBps: per NIC (empty: params().nicGBps). Returns the
  // host index.
  Status addHost(const std::vector<int>& nicLeaf, int* hostIndex = nullptr,
                 const std::vector<double>& nicGBps = {});

  int numGpus() const { return static_cast<int>(gpuNode_.size()); }
  int numHosts() const { return static_cast<int>(hosts_.size()); }
  int numNodes() const { return static_cast<int>(nodes_.size()); }
  int numLinks() const { return static_cast<int>(links_.size()); }
  const Node& node(int id) const { return nodes_[id]; }
  const Link& link(int id) const { return links_[id]; }
  const HostInfo& host(int h) const { return hosts_[h]; }
  int hostOfGpu(int gpu) const { return gpuHost_[gpu]; }
  int localGpu(int gpu) const { return gpu - hosts_[gpuHost_[gpu]].firstGpu; }
  int gpuNode(int gpu) const { return gpuNode_[gpu]; }
  int nicOfGpu(int gpu) const;  // local NIC index used by this GPU
  // NVLink links of a GPU (to and from its domain switch), PCIe links to its NIC and host root.
  struct GpuLinks {
    int32_t nvUp = -1, nvDown = -1, pcieToNic = -1, pcieFromNic = -1, pcieToRoot = -1,
            pcieFromRoot = -1, domain = -1;
  };
  const GpuLinks& gpuLinks(int gpu) const { return gpuLinks_[gpu]; }
  // Injection links of a host's NIC: NIC->leaf and leaf->NIC (-1 when not cabled).
  int nicUpLink(int host, int nic) const { return nicUp_[host][nic]; }
  int nicDownLink(int host, int nic) const { return nicDown_[host][nic]; }

  // Dense switch numbering for routing tables.
  const std::vector<int32_t>& switches() const { return switches_; }
  int switchIndex(int node) const { return switchIndex_[node]; }
  const std::vector<int32_t>& outLinks(int node) const { return out_[node]; }
  const std::vector<int32_t>& inLinks(int node) const { return in_[node]; }
  int maxGroup() const { return maxGroup_; }

  // What-if: take links or switches out of service (a switch takes all its links with it).
  void setLinkUp(int link, bool up) {
    links_[link].up = up;
    ++version_;
  }
  void setSwitchUp(int node, bool up);
  // Scales every link of a level (e.g. model a degraded tier).
  void scaleLevel(LinkLevel level, double factor);
  // A host-wide resource of `gbps` that every flow between two GPUs of `host` also crosses: what
  // processes on one machine share (memory bandwidth, CPU cores). Returns its link id.
  int addHostShared(int host, double gbps);
  std::string linkName(int id) const;
  uint64_t version() const { return version_; }  // bumped by every change; routers cache by it

 private:
  int addNode(NodeKind kind, int host, int tier, int group, std::string name);

  NodeParams params_;
  std::vector<Node> nodes_;
  std::vector<Link> links_;
  std::vector<std::vector<int32_t>> out_, in_;
  std::vector<HostInfo> hosts_;
  std::vector<int32_t> gpuNode_, gpuHost_;
  std::vector<GpuLinks> gpuLinks_;
  std::vector<std::vector<int32_t>> nicUp_, nicDown_;
  std::vector<int32_t> switches_, switchIndex_;
  std::vector<int32_t> domainSwitch_;  // NVLink domain -> NVSwitch node
  int maxGroup_ = -1;
  uint64_t version_ = 0;
};

}  // namespace loom::sim
