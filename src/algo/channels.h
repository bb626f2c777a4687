// Multi-channel composition: k channels, each an independent run of a flat builder (a ring, a
// tree) over its own slice of the buffer and its own rank order, appended into one Schedule with
// Step::channel = c. Slices are contiguous element ranges, so only collectives whose buffer is one
// vector of `count` elements on every rank (all-reduce) can be split this way.
//
// Orders (position -> rank), built host by host from Group::hostOf (hosts in id order):
//   kRotate  channel c visits every host's ranks rotated by c: its ring enters a host on local
//            rank c and leaves from local rank c - 1 (NCCL's channel rotation; rings leave a host
//            through k different GPUs, but enter the next host on another rail).
//   kSnake   rail-aligned: on even-numbered hosts channel c enters on local rank c and leaves from
//            local rank c + 1, on odd-numbered hosts the other way round, so every hop between
//            hosts joins GPUs of the same local index, i.e. NICs of the same rail (GPU g uses NIC
//            g on an 8-GPU, 8-NIC host), and each NIC of a host carries exactly one channel's
//            outgoing traffic. With an odd number of hosts one hop (last host -> first) changes
//            rail. No NVLink detour (PXN) is needed for rings.
#pragma once

#include <vector>

#include "algo/registry.h"

namespace loom::algo {

enum class ChannelOrder { kRotate, kSnake };

// Position -> rank of channel c.
std::vector<int> channelOrder(const Group& g, int c, ChannelOrder kind);

// The channel count a multi-channel builder uses for `a` on `g`: a.channels when set, else the
// ranks of the smallest host (one channel per GPU of a host), within [1, kMaxChannels].
int channelsFor(const CollArgs& a, const Group& g);

// Builds `k` channels of `inner` (an all-reduce builder) for this rank into *out.
Status buildChannels(const CollArgs& a, const Group& g, Builder inner, int k, ChannelOrder kind,
                     const char* name, Schedule* out);

}  // namespace loom::algo
