// Shared bits of the generators: GUID/LID/name allocation.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "topo/fabric_builder.h"

namespace loom::topo::synth {

constexpr int kMaxSwitchPorts = 255;  // ibsim and the IB spec: at most 255 ports a node
constexpr uint64_t kSwitchGuidBase = 0x0c42a10300000000ULL;
constexpr uint64_t kCaGuidBase = 0xb8cef60300000000ULL;

// Hands out GUIDs and LIDs in creation order (switches then CAs get LIDs 1, 2, ...).
class IdAlloc {
 public:
  int addSwitch(FabricBuilder* b, const std::string& desc, int nports) {
    ++switches_;
    return b->addNode(NodeKind::kSwitch, kSwitchGuidBase + switches_, desc + " Quantum", nports,
                      ++lid_);
  }
  // NIC `rail` of host `host` (0-based): "node00001 mlx5_0". Port GUID = node GUID + 1.
  int addCa(FabricBuilder* b, int host, int rail) {
    ++cas_;
    char desc[64];
    std::snprintf(desc, sizeof(desc), "node%05d mlx5_%d", host + 1, rail);
    return b->addNode(NodeKind::kCa, kCaGuidBase + (static_cast<uint64_t>(cas_) << 4), desc, 1,
                      ++lid_);
  }

 private:
  uint64_t switches_ = 0, cas_ = 0;
  int lid_ = 0;
};

}  // namespace loom::topo::synth
