// What-if edits of a Net: take switches or links out of service, given by name or at random, so
// a run shows what a failed spine or global link costs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/net.h"

namespace loom::sim {

// `spec` is a comma list of
//   switch:NAME        that switch (Net node name, e.g. "ft-spine-p0-3")
//   spines:K           K random switches of tier >= 2
//   leaves:K           K random leaf switches
//   links:K            K random switch-to-switch cables (both directions)
//   global:K           K random Dragonfly+ global cables
//   level:NAME=F       scale every link of a level (nvlink pcie nic tier1 tier2 global) by F
// Random picks use `seed`. `done` receives one readable line per change.
Status applyFailures(const std::string& spec, uint64_t seed, Net* net,
                     std::vector<std::string>* done);

}  // namespace loom::sim
