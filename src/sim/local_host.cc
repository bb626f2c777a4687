#include "sim/local_host.h"

namespace loom::sim {

Status localHostNet(const LocalHostParams& p, std::unique_ptr<Net>* out) {
  if (p.hosts <= 0 || p.ranksPerHost <= 0)
    return invalidArgument("sim::localHostNet: hosts (", p.hosts, ") and ranksPerHost (",
                           p.ranksPerHost, ") must be > 0");
  if (p.flowGBps <= 0 || p.nicGBps <= 0 || p.hostGBps < 0)
    return invalidArgument("sim::localHostNet: flowGBps and nicGBps must be > 0, hostGBps >= 0");
  NodeParams np;
  np.gpusPerNode = p.ranksPerHost;
  np.nicsPerNode = 1;
  np.nvlinkDomain = p.ranksPerHost;
  np.nvlinkGBps = p.flowGBps;
  np.pcieGBps = p.nicGBps;
  np.nicGBps = p.nicGBps;
  auto net = std::make_unique<Net>(np);
  const int sw = net->addSwitch("flat", 1, -1);
  for (int h = 0; h < p.hosts; ++h) {
    int index = 0;
    LOOM_CHECK(net->addHost({sw}, &index));
    if (p.hostGBps > 0) net->addHostShared(index, p.hostGBps);
  }
  *out = std::move(net);
  return Status();
}

}  // namespace loom::sim
