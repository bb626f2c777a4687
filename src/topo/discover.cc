#include "topo/discover.h"

#include <cstdio>

#include "core/log.h"
#include "core/params.h"
#include "topo/classify.h"
#include "topo/ibnet.h"
#include "topo/node.h"

namespace loom::topo {

namespace {
Status runIbnetdiscover(Fabric* out) {
  FILE* p = popen("ibnetdiscover 2>/dev/null", "r");
  if (!p) return errnoStatus("cannot run ibnetdiscover", errno);
  std::string text;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) text.append(buf, n);
  int rc = pclose(p);
  if (rc != 0) {
    return systemError("ibnetdiscover failed (exit status ", rc,
                       "); give its output with LOOM_IB_TOPO_FILE instead");
  }
  IbnetReport rep;
  LOOM_CHECK(parseIbnetdiscover(text, "ibnetdiscover", out, &rep));
  for (const std::string& note : rep.notes) LOOM_WARN(TOPO, "ibnetdiscover: ", note);
  return Status();
}
}  // namespace

Status discoverTopology(const DiscoverOptions& opts, Topology* out) {
  const std::string file = params::topoFile();
  Topology t;
  if (!file.empty()) {
    LOOM_CHECK(loadTopologyFile(file, &t));
    LOOM_INFO(TOPO, "topology loaded from ", file, " (LOOM_TOPO_FILE)");
  } else {
    if (opts.probeNode && haveHwloc()) {
      Host h;
      LOOM_CHECK(probeHost("", &h));
      t.hosts.push_back(std::move(h));
    }
    std::string ib = opts.ibTopoFile.empty() ? params::ibTopoFile() : opts.ibTopoFile;
    if (!ib.empty()) {
      IbnetReport rep;
      LOOM_CHECK(loadIbnetdiscoverFile(ib, &t.fabric, &rep));
      for (const std::string& note : rep.notes) LOOM_WARN(TOPO, ib, ": ", note);
    } else if (opts.runIbnetdiscover) {
      LOOM_CHECK(runIbnetdiscover(&t.fabric));
    }
    HostMap map;
    if (!opts.hostMapFile.empty()) LOOM_CHECK(loadHostMap(opts.hostMapFile, &map));
    attachHosts(&t, opts.hostMapFile.empty() ? nullptr : &map);
    classify(&t);
    for (const std::string& o : t.cls.oddities) LOOM_WARN(TOPO, "fabric: ", o);
  }
  const std::string dump = params::topoDumpFile();
  if (!dump.empty()) {
    LOOM_CHECK(writeTopologyFile(dump, t));
    LOOM_INFO(TOPO, "topology written to ", dump, " (LOOM_TOPO_DUMP_FILE)");
  }
  *out = std::move(t);
  return Status();
}

}  // namespace loom::topo
