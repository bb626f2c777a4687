#include "options.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>

#include "sim/local_host.h"
#include "topo/classify.h"
#include "topo/ibnet.h"
#include "topo/synth/synth.h"

namespace loom::simtool {

bool parseArgs(int argc, char** argv, Options* o, int* rc) {
  CLI::App app{
      "loom-sim: run loom's own schedules on a modelled fabric (flow-level, max-min fair).\n"
      "Example: loom-sim --fabric fat-tree:levels=2,leavesPerPod=8,spinesPerPod=8,hostsPerLeaf=8,"
      "rails=8,speed=NDR --algo ring,rabenseifner,hier --sweep 1M:4G:4 --plot out"};
  auto* g = app.add_option_group("fabric", "one of");
  g->add_option("--fabric", o->fabric, "generator spec: fat-tree:k=v,... or dragonfly:k=v,...");
  g->add_option("--topo", o->topoFile, "Topology JSON file (loom-topo --dump)");
  g->add_option("--ibnet", o->ibnetFile, "ibnetdiscover output file");
  g->require_option(1);
  app.add_option("--gpus-per-node", o->node.gpusPerNode, "GPUs per host")->capture_default_str();
  app.add_option("--nvlink-domain", o->node.nvlinkDomain, "GPUs per NVLink domain")
      ->capture_default_str();
  app.add_option("--nvlink-gbps", o->node.nvlinkGBps, "NVLink GB/s per GPU per direction")
      ->capture_default_str();
  app.add_option("--pcie-gbps", o->node.pcieGBps, "PCIe GB/s per GPU per direction")
      ->capture_default_str();
  app.add_option("--coll", o->coll,
                 "allreduce, allgather, reducescatter, broadcast, reduce, alltoall")
      ->capture_default_str();
  app.add_option("--size", o->size,
                 "message size (nccl-tests 'size'): 1M, 1G, 4GiB ..., or a list 1M,32M,1G")
      ->capture_default_str();
  app.add_option("--sweep", o->sweep, "size sweep MIN:MAX[:FACTOR] (factor 2 by default)");
  app.add_option("--algo", o->algos,
                 "comma list of registered algorithms and/or 'planner' (the planner's choice; "
                 "with --fail also 'replanned' for the failed fabric), or 'all'")
      ->capture_default_str();
  app.add_option("--ranks", o->ranks, "ranks (first N GPUs; 0: all)")->capture_default_str();
  app.add_option("--chunk-bytes", o->chunkBytes, "schedule pipeline chunk")->capture_default_str();
  app.add_option("--channels", o->channels,
                 "run K copies of the algorithm on 1/K of the data, channel c with every host's "
                 "ranks rotated by c (NCCL-style rings leaving a host through K NICs)")
      ->capture_default_str();
  app.add_option("--routing", o->routing, "ecmp, spray (adaptive), valiant, ugal")
      ->capture_default_str();
  app.add_option("--seed", o->sim.seed, "ECMP hash / Valiant seed")->capture_default_str();
  app.add_option("--seeds", o->seeds,
                 "Monte Carlo: run this many seeds (ECMP), report mean/min/max")
      ->capture_default_str();
  app.add_option("--lat-nvlink-us", o->sim.latNvlinkUs)->capture_default_str();
  app.add_option("--lat-pcie-us", o->sim.latPcieUs)->capture_default_str();
  app.add_option("--lat-net-us", o->sim.latNetUs, "per message through the network")
      ->capture_default_str();
  app.add_option("--lat-hop-us", o->sim.latHopUs, "per switch crossed")->capture_default_str();
  app.add_option("--reduce-gbps", o->sim.reduceGBps, "reduction rate (0: free)")
      ->capture_default_str();
  app.add_option("--copy-gbps", o->sim.copyGBps, "local copy rate (0: free)")
      ->capture_default_str();
  app.add_flag("--compute-shared", o->sim.computeShared,
               "reductions and copies share each rank's core (max-min, as flows share a link); "
               "off: each takes bytes / rate however many run at once");
  app.add_option("--host-cores", o->sim.hostCores,
                 "with --compute-shared: all ranks of a host share this many cores (0: no "
                 "host limit)")
      ->capture_default_str();
  app.add_option("--core-gbps", o->coreGBps,
                 "with --compute-shared: transfers are moved by the CPUs, a byte costs the "
                 "sender's and the receiver's core 1 / this (GB/s; 0: moved by NICs/DMA)")
      ->capture_default_str();
  app.add_option("--busy-slowdown", o->busySlowdown,
                 "with --host-cores: K:F,... while K ranks of a host are busy at once (more than "
                 "its cores) they deliver 1/F of the cores' capacity, linear in between; no "
                 "folding (e.g. 4:1.3,8:1.6)");
  app.add_flag("--busy-by-demand", o->sim.busyByDemand,
               "with --busy-slowdown: a busy rank counts as the share of its core its flows "
               "would take alone (at most 1)");
  app.add_option(
         "--batch-us", o->batchUs,
         "merge events closer than this (approximation for algorithms with few large steps: "
         "events finish up to this early; not for pipelined rings; 0 = exact to 1 ps)")
      ->capture_default_str();
  app.add_flag("--no-batch", o->noBatch,
               "only events at the same instant form a batch (no 1 ps window; slower): folded "
               "and unfolded runs then agree to rounding, where the window can move an event by "
               "up to 1 ps in one and not the other");
  app.add_flag("--exact", o->sim.exact,
               "no batching, global rate solve, no folding (slow; for checking)");
  app.add_flag("--no-fold", o->noFold,
               "do not fold symmetric ranks into classes (the result is the same; for checking)");
  app.add_flag("--no-bundle", o->noBundle,
               "do not merge parallel switch links crossed evenly into one constraint (the "
               "result is the same; for checking)");
  app.add_option("--plan-params", o->planParams,
                 "with --algo planner: cost parameters over the simulated machine's (loom-plan "
                 "--params syntax, e.g. netAlphaUs=3,reduceGBps=500)");
  app.add_option("--fail", o->fail,
                 "what-if, comma list: switch:NAME spines:K leaves:K links:K global:K "
                 "level:NAME=FACTOR; runs healthy and degraded");
  app.add_option("--fail-seed", o->failSeed, "seed of random failures")->capture_default_str();
  app.add_option("--top", o->top, "busiest links to print")->capture_default_str();
  app.add_option("--plot", o->plotDir, "write PNG plots (gnuplot) and their data here");
  app.add_flag("-q,--quiet", o->quiet, "only the result table");
  try {
    app.parse(argc, argv);
    if (o->batchUs > 0 && o->noBatch)
      throw CLI::ValidationError("--batch-us", "cannot go with --no-batch");
    if (o->batchUs > 0) o->sim.timeEpsilon = o->batchUs * 1e-6;
    if (o->noBatch) o->sim.timeEpsilon = 0;
    o->sim.fold = !o->noFold;
    o->sim.bundle = !o->noBundle;
    if (o->sim.hostCores < 0 || o->coreGBps < 0)
      throw CLI::ValidationError(o->sim.hostCores < 0 ? "--host-cores" : "--core-gbps",
                                 "must be >= 0");
    if ((o->sim.hostCores > 0 || o->coreGBps > 0) && !o->sim.computeShared)
      throw CLI::ValidationError(o->sim.hostCores > 0 ? "--host-cores" : "--core-gbps",
                                 "needs --compute-shared");
    o->sim.sendCoreGBps = o->sim.recvCoreGBps = o->coreGBps;
    if (!o->busySlowdown.empty() && o->sim.hostCores <= 0)
      throw CLI::ValidationError("--busy-slowdown", "needs --host-cores");
    Status bs = sim::parseBusySlowdown(o->busySlowdown, "--busy-slowdown", &o->sim.busySlowdown);
    if (!bs.ok()) throw CLI::ValidationError(bs.message());
  } catch (const CLI::ParseError& e) {
    *rc = app.exit(e);
    return false;
  }
  return true;
}

Status parseSize(const std::string& s, uint64_t* out) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  std::string suf(end);
  if (!suf.empty() && suf.back() == 'B') suf.pop_back();
  if (!suf.empty() && suf.back() == 'i') suf.pop_back();
  double m = 1;
  if (suf == "K" || suf == "k")
    m = 1024.0;
  else if (suf == "M")
    m = 1024.0 * 1024;
  else if (suf == "G")
    m = 1024.0 * 1024 * 1024;
  else if (suf == "T")
    m = 1024.0 * 1024 * 1024 * 1024;
  else if (!suf.empty())
    return invalidArgument("size \"", s, "\": unknown suffix");
  if (s.empty() || end == s.c_str() || v < 0) return invalidArgument("size \"", s, "\"");
  *out = static_cast<uint64_t>(v * m);
  return Status();
}

std::string sizeName(uint64_t b) {
  const char* u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  double v = static_cast<double>(b);
  while (v >= 1024 && i < 4 && static_cast<uint64_t>(v) % 1024 == 0) {
    v /= 1024;
    ++i;
  }
  return strCat(static_cast<uint64_t>(v), u[i]);
}

Status sizesOf(const Options& o, std::vector<uint64_t>* out) {
  out->clear();
  if (o.sweep.empty()) {  // one size, or a list "1M,32M,1G"
    size_t pos = 0;
    while (pos <= o.size.size()) {
      size_t comma = o.size.find(',', pos);
      if (comma == std::string::npos) comma = o.size.size();
      uint64_t b;
      LOOM_CHECK(parseSize(o.size.substr(pos, comma - pos), &b));
      out->push_back(b);
      pos = comma + 1;
    }
    return Status();
  }
  size_t c1 = o.sweep.find(':');
  if (c1 == std::string::npos) return invalidArgument("--sweep \"", o.sweep, "\": MIN:MAX[:F]");
  size_t c2 = o.sweep.find(':', c1 + 1);
  uint64_t lo, hi;
  LOOM_CHECK(parseSize(o.sweep.substr(0, c1), &lo));
  LOOM_CHECK(parseSize(o.sweep.substr(c1 + 1, c2 == std::string::npos ? c2 : c2 - c1 - 1), &hi));
  double f = c2 == std::string::npos ? 2.0 : std::atof(o.sweep.c_str() + c2 + 1);
  if (lo == 0 || hi < lo || f <= 1.0) return invalidArgument("--sweep \"", o.sweep, "\"");
  for (double s = lo; s <= hi * 1.0000001; s *= f) out->push_back(static_cast<uint64_t>(s));
  return Status();
}

Status loadTopology(const Options& o, topo::Topology* out) {
  if (!o.fabric.empty()) {
    LOOM_CHECK(topo::synth::generateFromSpec(o.fabric, out));
  } else if (!o.topoFile.empty()) {
    LOOM_CHECK(topo::loadTopologyFile(o.topoFile, out));
  } else {
    LOOM_CHECK(topo::loadIbnetdiscoverFile(o.ibnetFile, &out->fabric));
  }
  if (out->cls.type == topo::FabricType::kNone) topo::classify(out);
  return Status();
}

Status parseColl(const std::string& s, sched::CollType* out) {
  for (int i = 0; i < sched::kNumCollTypes; ++i) {
    auto c = static_cast<sched::CollType>(i);
    if (s == sched::collName(c)) {
      *out = c;
      return Status();
    }
  }
  return invalidArgument("--coll \"", s, "\": unknown collective");
}

}  // namespace loom::simtool
