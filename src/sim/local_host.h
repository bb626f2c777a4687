// A Net for ranks that are processes on CPU hosts (loom's shm and tcp runs, and loom-plan without
// a fabric). Per host `ranksPerHost` rank slots (the Net's "GPUs", one NVLink domain per host):
//   - between ranks of a host, a flow crosses the sender's and the receiver's own link pair at
//     `flowGBps` (what one process moves: its copy rate) and the host's shared link at `hostGBps`
//     (what all processes of the host move together: cores x per-core rate, or the memory
//     bandwidth, whichever is less; 0: no such limit);
//   - between hosts, a flow leaves through the host's one NIC at `nicGBps` into one non-blocking
//     switch (a flat network); each rank reaches the NIC at `nicGBps` too.
// Reductions and latencies are SimOptions (reduceGBps, latNvlinkUs for intra-host messages).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "sim/net.h"

namespace loom::sim {

struct LocalHostParams {
  int hosts = 1;
  int ranksPerHost = 2;
  double flowGBps = 6;
  double hostGBps = 12;
  double nicGBps = 1.5;
};

// `out` is replaced by the new Net; rank r of host h is GPU h * ranksPerHost + r.
Status localHostNet(const LocalHostParams& p, std::unique_ptr<Net>* out);

// SimOptions::busySlowdown from text "K:F,K:F,..." (e.g. "4:1.28,8:1.6"; "" gives none). `what`
// names the option in the error (a malformed point; the engine checks the values).
Status parseBusySlowdown(const std::string& text, const std::string& what,
                         std::vector<std::pair<int, double>>* out);

}  // namespace loom::sim
