// loom-topo: what loom sees of this machine and of a fabric.
//
//   loom-topo                              this machine (hwloc) + LOOM_IB_TOPO_FILE if set
//   loom-topo --ib fabric.txt              + a fabric from ibnetdiscover output (default or -p)
//   loom-topo --xml node.xml               node topology from an hwloc XML file
//   loom-topo --topo t.json                a saved Topology (as LOOM_TOPO_FILE)
//   loom-topo --generate dragonfly:groups=8 a generated fabric
//   ... --json | --dot | --ibnet            print JSON, Graphviz, or ibnetdiscover/ibsim text
//   ... --expect expected.txt              list links of the expected fabric that are missing
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>

#include "topo/classify.h"
#include "topo/discover.h"
#include "topo/dot.h"
#include "topo/ibnet.h"
#include "topo/node.h"
#include "topo/synth/synth.h"

namespace {

using namespace loom;
using namespace loom::topo;

struct Args {
  std::string xml, ib, topo, generate, map, expect, out;
  bool json = false, dot = false, dotHosts = false, ibnet = false, noNode = false, time = false;
};

Status load(const Args& a, Topology* t) {
  if (!a.topo.empty()) {
    LOOM_CHECK(loadTopologyFile(a.topo, t));
  } else if (!a.generate.empty()) {
    LOOM_CHECK(synth::generateFromSpec(a.generate, t));
  } else if (!a.xml.empty() || !a.ib.empty()) {
    if (!a.xml.empty() && !a.noNode) {
      Host h;
      LOOM_CHECK(probeHost(a.xml, &h));
      t->hosts.push_back(std::move(h));
    }
    if (!a.ib.empty()) {
      IbnetReport rep;
      LOOM_CHECK(loadIbnetdiscoverFile(a.ib, &t->fabric, &rep));
      if (t->fabric.nodes.empty())
        return invalidArgument("--ib ", a.ib, ": no switches or CAs in the file (empty?)");
      for (const std::string& n : rep.notes)
        std::fprintf(stderr, "loom-topo: %s: %s\n", a.ib.c_str(), n.c_str());
    }
  } else {
    DiscoverOptions o;
    o.probeNode = !a.noNode;
    o.hostMapFile = a.map;
    return discoverTopology(o, t);
  }
  HostMap map;
  if (!a.map.empty()) LOOM_CHECK(loadHostMap(a.map, &map));
  attachHosts(t, a.map.empty() ? nullptr : &map);
  classify(t);
  return Status();
}

Status expectReport(const Args& a, const Topology& t, std::string* out) {
  Fabric want;
  if (a.expect.size() > 5 && a.expect.substr(a.expect.size() - 5) == ".json") {
    Topology e;
    LOOM_CHECK(loadTopologyFile(a.expect, &e));
    want = std::move(e.fabric);
  } else {
    LOOM_CHECK(loadIbnetdiscoverFile(a.expect, &want));
  }
  if (want.nodes.empty()) return invalidArgument("--expect ", a.expect, ": no nodes in the file");
  FabricDiff d;
  Status s = compareFabrics(want, t.fabric, &d);
  if (!s.ok()) return Status(s.code(), strCat("--expect ", a.expect, ": ", s.message()));
  *out += strCat("expected fabric ", a.expect, d.byName ? " (matched by node name)" : "", ": ",
                 d.missing.size(), " links missing, ", d.unexpected, " links not expected\n");
  for (const std::string& m : d.missing) *out += "  missing: " + m + "\n";
  return Status();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"loom-topo: the machine (hwloc) and the fabric (ibnetdiscover) as loom sees them"};
  Args a;
  app.add_option("--xml", a.xml, "hwloc XML file for the node topology (default: this machine)");
  app.add_option("--ib", a.ib, "ibnetdiscover output file (default or -p form)");
  app.add_option("--topo", a.topo, "load a Topology JSON file");
  app.add_option(
      "--generate", a.generate,
      "generate a fabric: fat-tree:levels=2,leavesPerPod=4,... or dragonfly:groups=8,...");
  app.add_option("--map", a.map, "host map file: '<guid> <hostname>' per line");
  app.add_option("--expect", a.expect,
                 "expected fabric (ibnetdiscover text or .json): list missing links");
  app.add_option("-o,--output", a.out, "write to this file instead of stdout");
  app.add_flag("--json", a.json, "print the Topology as JSON");
  app.add_flag("--dot", a.dot, "print the fabric as Graphviz DOT");
  app.add_flag("--dot-hosts", a.dotHosts, "with --dot: draw every host");
  app.add_flag("--ibnet", a.ibnet, "print the fabric as ibnetdiscover text (an ibsim net file)");
  app.add_flag("--no-node", a.noNode, "do not probe this machine with hwloc");
  app.add_flag("--time", a.time, "print the load + classify time to stderr");
  CLI11_PARSE(app, argc, argv);

  auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  Topology t;
  Status s = load(a, &t);
  if (!s.ok()) {
    std::fprintf(stderr, "loom-topo: %s\n", s.message().c_str());
    return 1;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (a.time) {
    double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    std::fprintf(stderr, "loom-topo: loaded and classified in %.3f s (cpu %.3f s)\n", secs, cpu);
  }
  std::string text;
  if (a.json) {
    text = toJson(t);
  } else if (a.dot) {
    DotOptions d;
    d.hosts = a.dotHosts;
    text = toDot(t, d);
  } else if (a.ibnet) {
    text = writeIbnetdiscover(t.fabric);
  } else {
    text = summary(t);
  }
  if (!a.expect.empty()) {
    s = expectReport(a, t, &text);
    if (!s.ok()) {
      std::fprintf(stderr, "loom-topo: %s\n", s.message().c_str());
      return 1;
    }
  }
  if (a.out.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    std::ofstream o(a.out, std::ios::binary);
    o << text;
    if (!o) {
      std::fprintf(stderr, "loom-topo: cannot write %s\n", a.out.c_str());
      return 1;
    }
  }
  return 0;
}
