// Rail-aligned multi-channel ring all-reduce: k channels (CollArgs::channels; default one per GPU
// of a host), each a pipelined ring all-reduce (allreduce_ring.cc) over 1/k of the buffer, with
// the snake order of algo/channels.h: every hop between hosts joins GPUs of the same local index,
// so channel c's traffic between hosts stays on one rail (one leaf plane of a rail-optimised
// fat-tree or Dragonfly+), and the k channels leave each host through k different NICs.
// Cost with p ranks on H hosts of B GPUs, B NICs of bandwidth beta_nic each, k = B:
//   2(p-1) (alpha + n/(p k) / min(beta_nic, beta_nvlink)) : each NIC carries one channel, 2(p-1)/p
// of n/k bytes, so the bus bandwidth is k x one NIC's (one channel's) bandwidth.
#include "algo/channels.h"

namespace loom::algo {

Status buildAllReduceRingRail(const CollArgs& a, const Group& g, Schedule* out) {
  return buildChannels(a, g, &buildAllReduceRing, channelsFor(a, g), ChannelOrder::kSnake,
                       "ring_rail", out);
}

}  // namespace loom::algo
