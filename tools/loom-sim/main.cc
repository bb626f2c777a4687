// loom-sim: simulate loom's collective schedules on a modelled fabric. For every algorithm and
// size it builds all ranks' Schedules with the registered builder, runs them through the
// flow-level simulator (src/sim) and prints time, algbw and busbw (nccl-tests conventions), the
// busiest links, and optionally PNG plots. With --fail it runs the degraded fabric too.
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include "algo/registry.h"
#include "core/datatype.h"
#include "options.h"
#include "planned.h"
#include "plots.h"
#include "sim/channels.h"
#include "sim/from_topology.h"
#include "sim/report.h"
#include "sim/schedule_set.h"
#include "sim/whatif.h"
#include "topo/classify.h"

namespace loom::simtool {
namespace {

struct Variant {
  std::string name;
  std::unique_ptr<sim::Net> net;
  topo::Topology topo;  // the fabric as this variant's planner sees it (failures applied)
};

Status collArgs(sched::CollType coll, uint64_t bytes, int n, uint64_t chunk, sched::CollArgs* a) {
  a->coll = coll;
  a->dtype = DataType::kFloat32;
  a->chunkBytes = chunk;
  uint64_t elems = bytes / dtypeSize(a->dtype);
  bool perRank = coll == sched::CollType::kAllGather || coll == sched::CollType::kReduceScatter ||
                 coll == sched::CollType::kAllToAll;
  a->count = perRank ? elems / n : elems;
  if (a->count == 0) return invalidArgument("size ", bytes, " too small for ", n, " ranks");
  return Status();
}

Status algoList(const Options& o, sched::CollType coll, std::vector<const algo::AlgoInfo*>* out) {
  if (o.algos == "all") {
    *out = algo::algosFor(coll);
    return Status();
  }
  size_t pos = 0;
  while (pos <= o.algos.size()) {
    size_t c = o.algos.find(',', pos);
    if (c == std::string::npos) c = o.algos.size();
    std::string name = o.algos.substr(pos, c - pos);
    if (name == "planner") {  // the planner's choice (planned.h)
      out->push_back(nullptr);
      pos = c + 1;
      continue;
    }
    const algo::AlgoInfo* a = algo::findAlgo(coll, name);
    if (!a) {
      std::string known;
      for (const auto* x : algo::algosFor(coll)) known += std::string(" ") + x->name;
      return invalidArgument("--algo ", name, ": not registered for ", sched::collName(coll),
                             " (have:", known, ", or planner)");
    }
    out->push_back(a);
    pos = c + 1;
  }
  return Status();
}

struct Row {
  double mean = 0, min = 0, max = 0;
  sim::SimResult last;
};

Status runOne(const Options& o, const sim::Net& net, const sim::ScheduleSet& set, Row* row) {
  sim::SimOptions so = o.sim;
  LOOM_CHECK(sim::parseRouting(o.routing, &so.routing));
  int runs = std::max(1, o.seeds);
  row->min = 1e300;
  row->max = 0;
  row->mean = 0;
  for (int i = 0; i < runs; ++i) {
    so.seed = o.sim.seed + i;
    LOOM_CHECK(sim::simulate(net, set, {}, so, &row->last));
    row->mean += row->last.seconds / runs;
    row->min = std::min(row->min, row->last.seconds);
    row->max = std::max(row->max, row->last.seconds);
  }
  return Status();
}

int run(const Options& o) {
  auto fail = [](const Status& s) {
    std::cerr << "loom-sim: " << s.toString() << "\n";
    return 1;
  };
  topo::Topology topo;
  Status s = loadTopology(o, &topo);
  if (!s.ok()) return fail(s);
  std::vector<Variant> variants;
  variants.push_back({"healthy", std::make_unique<sim::Net>(o.node), topo});
  sim::TopoMap map;
  if (!(s = sim::netFromTopology(topo, variants[0].net.get(), &map)).ok()) return fail(s);
  if (!o.fail.empty()) {
    variants.push_back({"failed", std::make_unique<sim::Net>(o.node), {}});
    if (!(s = sim::netFromTopology(topo, variants[1].net.get())).ok()) return fail(s);
    std::vector<std::string> done;
    if (!(s = sim::applyFailures(o.fail, o.failSeed, variants[1].net.get(), &done)).ok())
      return fail(s);
    if (!(s = degradedTopology(topo, map, *variants[0].net, *variants[1].net, &variants[1].topo))
             .ok())
      return fail(s);
    if (!o.quiet)
      for (const std::string& d : done) std::cout << "# what-if: " << d << "\n";
  }
  const sim::Net& net0 = *variants[0].net;
  int n = o.ranks > 0 ? o.ranks : net0.numGpus();
  if (n > net0.numGpus())
    return fail(invalidArgument("--ranks ", n, " > ", net0.numGpus(), " GPUs"));
  sched::CollType coll;
  std::vector<uint64_t> sizes;
  std::vector<const algo::AlgoInfo*> algos;
  if (!(s = parseColl(o.coll, &coll)).ok() || !(s = sizesOf(o, &sizes)).ok() ||
      !(s = algoList(o, coll, &algos)).ok())
    return fail(s);
  std::vector<int> hostOf(n);
  for (int r = 0; r < n; ++r) hostOf[r] = net0.hostOfGpu(r);
  if (!o.quiet) {
    std::cout << "# fabric: " << topo::fabricTypeName(topo.cls.type) << ", " << net0.numHosts()
              << " hosts, " << net0.numGpus() << " GPUs (" << o.node.gpusPerNode
              << " per host, NVLink domain " << o.node.nvlinkDomain << "), "
              << topo::countsLine(topo::countFabric(topo)) << "\n"
              << "# ranks " << n << ", routing " << o.routing
              << (o.seeds > 1 ? strCat(", ", o.seeds, " seeds") : std::string()) << ", latency "
              << o.sim.latNetUs << " us + " << o.sim.latHopUs << " us/switch, reduce "
              << o.sim.reduceGBps << " GB/s"
              << (o.sim.computeShared
                      ? strCat(", compute shared",
                               o.sim.hostCores > 0 ? strCat(" (", o.sim.hostCores, " cores/host)")
                                                   : std::string(),
                               o.coreGBps > 0 ? strCat(", CPU transfers ", o.coreGBps, " GB/s")
                                              : std::string())
                      : std::string())
              << "\n";
  }
  std::printf("%-8s %-14s %10s %14s %10s %10s %10s %8s %8s %8s\n", "fabric", "algo", "size",
              "time(us)", "algbw", "busbw", "flows", "shapes", "wall(s)", "classes");
  std::vector<BusbwSeries> series;
  if (!o.plotDir.empty()) mkdir(o.plotDir.c_str(), 0755);
  // --algo planner: a planner per variant (the failed one sees the degraded fabric).
  std::vector<std::unique_ptr<plan::Planner>> planners;
  if (std::find(algos.begin(), algos.end(), nullptr) != algos.end()) {
    plan::CostParams params;
    if (!(s = planParams(o.node, o.sim, o.planParams, &params)).ok()) return fail(s);
    for (const Variant& v : variants) {
      planners.push_back(makePlanner(v.topo, *v.net, n, params));
      if (!planners.back()->status().ok()) return fail(planners.back()->status());
    }
    if (!o.quiet)
      std::cout << "# planner: cost parameters " << params.toString()
                << (variants.size() > 1 ? "; 'planner (failed)' runs the healthy fabric's "
                                          "plan on the failed one, 'replanned' plans again "
                                          "for the failed fabric"
                                        : "")
                << "\n";
  }
  // What runs in one series: an algorithm, or a planner's choice (planner index).
  struct Job {
    std::string name;
    const algo::AlgoInfo* algo;
    int planner;
  };
  for (size_t vi = 0; vi < variants.size(); ++vi) {
    const Variant& v = variants[vi];
    std::vector<Job> jobs;
    for (const algo::AlgoInfo* a : algos) {
      if (a) {
        jobs.push_back({o.channels > 1 ? strCat(a->name, "x", o.channels) : a->name, a, -1});
      } else {
        jobs.push_back({"planner", nullptr, 0});
        if (vi > 0) jobs.push_back({"replanned", nullptr, static_cast<int>(vi)});
      }
    }
    for (const Job& job : jobs) {
      const std::string& aname = job.name;
      BusbwSeries ser;
      ser.name = variants.size() > 1 ? strCat(aname, " (", v.name, ")") : aname;
      Row row;
      uint64_t lastBytes = 0;
      for (uint64_t bytes : sizes) {
        sched::CollArgs args;
        if (!(s = collArgs(coll, bytes, n, o.chunkBytes, &args)).ok()) return fail(s);
        sim::ScheduleSet set(n);
        plan::Decision d;
        if (job.algo)
          s = o.channels > 1
                  ? sim::buildChannels(job.algo->build, args, n, hostOf, o.channels, &set)
                  : sim::buildScheduleSet(job.algo->build, args, n, hostOf, &set);
        else
          s = plannedSet(planners[job.planner].get(), args, n, hostOf, &d, &set);
        if (s.ok()) s = runOne(o, *v.net, set, &row);
        if (!s.ok()) return fail(Status(s.code(), strCat(aname, " ", bytes, " B: ", s.message())));
        double algbw = bytes / row.mean / 1e9, busbw = algbw * sim::busFactor(coll, n);
        std::printf("%-8s %-14s %10s %14.2f %10.2f %10.2f %10llu %8d %8.2f %8d\n", v.name.c_str(),
                    aname.c_str(), sizeName(bytes).c_str(), row.mean * 1e6, algbw, busbw,
                    static_cast<unsigned long long>(row.last.flows), set.numShapes(),
                    row.last.wallSeconds, row.last.foldClasses);
        if (o.seeds > 1)
          std::printf("%-8s %-14s %10s   min %.2f us, max %.2f us over %d seeds\n", "", "", "",
                      row.min * 1e6, row.max * 1e6, o.seeds);
        if (!job.algo)
          std::printf("#   %s %s: %s, predicted %.2f us\n", aname.c_str(), sizeName(bytes).c_str(),
                      d.describe().c_str(), d.predictedSec * 1e6);
        ser.points.push_back({static_cast<double>(bytes), busbw});
        lastBytes = bytes;
      }
      std::fflush(stdout);
      if (!o.quiet) {
        const sim::SimResult& r = row.last;
        std::printf(
            "#   solver: %llu flows, %llu events, %llu batches, %llu rate solves over %.1f "
            "flows on average (max %d)\n",
            static_cast<unsigned long long>(r.flows), static_cast<unsigned long long>(r.events),
            static_cast<unsigned long long>(r.batches),
            static_cast<unsigned long long>(r.recomputes),
            r.recomputes ? static_cast<double>(r.recomputeFlows) / r.recomputes : 0.0,
            r.maxComponentFlows);
        std::printf("#   %s; %llu flows solved\n", r.foldNote.c_str(),
                    static_cast<unsigned long long>(r.solverFlows));
        std::printf("#   makespan %.17g s\n", r.seconds);  // all digits, to compare runs
      }
      if (!o.quiet && o.top > 0) {
        std::cout << "#   busiest links (" << aname << ", " << sizeName(lastBytes) << ", " << v.name
                  << "):\n";
        for (const sim::BusyLink& b : sim::busiestLinks(*v.net, row.last, o.top))
          std::printf("#     %5.1f%%  %s\n", b.utilisation * 100, v.net->linkName(b.link).c_str());
        for (const sim::LevelUtil& u : sim::utilisationByLevel(*v.net, row.last))
          std::printf("#     level %-7s %6d links  mean %5.1f%%  max %5.1f%%\n",
                      sim::linkLevelName(u.level), u.links, u.mean * 100, u.max * 100);
      }
      if (!o.plotDir.empty()) {
        std::string tag = strCat(aname, "_", sizeName(lastBytes), "_", v.name);
        s = plotUtilisation(
            o.plotDir, tag,
            strCat(aname, " ", sizeName(lastBytes), " on ", n, " GPUs, ", o.routing, ", ", v.name),
            *v.net, row.last);
        if (!s.ok()) return fail(s);
      }
      series.push_back(std::move(ser));
    }
  }
  if (!o.plotDir.empty() && sizes.size() > 1) {
    s = plotBusbw(o.plotDir,
                  strCat(sched::collName(coll), " busbw, ", n, " GPUs, ",
                         topo::fabricTypeName(topo.cls.type), ", ", o.routing),
                  series);
    if (!s.ok()) return fail(s);
  }
  return 0;
}

}  // namespace
}  // namespace loom::simtool

int main(int argc, char** argv) {
  loom::simtool::Options o;
  int rc = 0;
  if (!loom::simtool::parseArgs(argc, argv, &o, &rc)) return rc;
  return loom::simtool::run(o);
}
