// Topology discovery with loom's parameters:
//   LOOM_TOPO_FILE       load this Topology JSON instead of probing (nothing else is read);
//   LOOM_HWLOC_XML       node topology from this hwloc XML (else the live machine);
//   LOOM_IB_TOPO_FILE    fabric from this ibnetdiscover output (default or -p form);
//   LOOM_TOPO_DUMP_FILE  write what was discovered as Topology JSON.
#pragma once

#include <string>

#include "core/status.h"
#include "topo/topology.h"

namespace loom::topo {

struct DiscoverOptions {
  bool probeNode = true;          // run hwloc for this host
  std::string ibTopoFile;         // overrides LOOM_IB_TOPO_FILE when not empty
  bool runIbnetdiscover = false;  // no file given: run `ibnetdiscover` (needs an IB port)
  std::string hostMapFile;        // "<guid> <hostname>" lines for CAs without hostnames
};

Status discoverTopology(const DiscoverOptions& opts, Topology* out);

}  // namespace loom::topo
