#include "sim/local_host.h"

#include <cstdlib>

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

Status parseBusySlowdown(const std::string& text, const std::string& what,
                         std::vector<std::pair<int, double>>* out) {
  out->clear();
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(at, end - at);
    const size_t colon = item.find(':');
    char* kEnd = nullptr;
    char* fEnd = nullptr;
    const long k = colon == std::string::npos ? 0 : std::strtol(item.c_str(), &kEnd, 10);
    const double f = colon == std::string::npos ? 0 : std::strtod(item.c_str() + colon + 1, &fEnd);
    if (colon == std::string::npos || kEnd != item.c_str() + colon || colon == 0 ||
        fEnd == item.c_str() + colon + 1 || *fEnd != '\0' || k <= 0 || k > (1 << 30))
      return invalidArgument(what, ": '", item, "' is not K:F (busy ranks : slowdown, e.g. 4:1.3)");
    out->push_back({static_cast<int>(k), f});
    at = end + 1;
  }
  return Status();
}

}  // namespace loom::sim
