// loom-plan: the planner's decision table for a topology and a rank count.
//   loom-plan --gen "dragonfly:groups=16,..." --ranks-per-host 4 --coll allreduce
//   loom-plan --topo fabric.json | --ibnet ibnetdiscover.txt | --hosts 4 --ranks-per-host 2
// For each message size from --min to --max (x2 steps; default 8 B .. 1 GiB) it prints per
// algorithm the best variant's predicted time, algorithm bandwidth and bus bandwidth, and the
// planner's choice. --explain SIZE prints every candidate for one size. --calibrate measures this
// machine's shm and tcp paths through loom itself and prints (or --save-params writes) the cost
// parameters (model terms and per-algorithm fits; the measured tuning table with
// --tuning-table), which --params-file and LOOM_PLAN_PARAMS=@file read back; --calibrate
// --from-json fits to saved --measure lines instead of measuring.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>

#include "calibrate.h"
#include "core/log.h"
#include "plan/planner.h"
#include "simulate.h"
#include "topo/classify.h"
#include "topo/ibnet.h"
#include "topo/synth/synth.h"

using namespace loom;

namespace {

Status loadTopo(const std::string& json, const std::string& ibnet, const std::string& gen,
                topo::Topology* t) {
  if (!json.empty()) LOOM_CHECK(topo::loadTopologyFile(json, t));
  if (!ibnet.empty()) LOOM_CHECK(topo::loadIbnetdiscoverFile(ibnet, &t->fabric));
  if (!gen.empty()) LOOM_CHECK(topo::synth::generateFromSpec(gen, t));
  if (!ibnet.empty() || t->cls.type == topo::FabricType::kNone) topo::classify(t);
  return Status();
}

std::string human(uint64_t b) {
  const char* u[] = {"B", "K", "M", "G"};
  int k = 0;
  while (b >= 1024 && b % 1024 == 0 && k < 3) b /= 1024, ++k;
  return std::to_string(b) + u[k];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"loom-plan: predicted cost and choice of every algorithm on a topology"};
  std::string json, ibnet, gen, collName = "allreduce", dtypeName = "float32", transport = "net";
  std::string minS = "8", maxS = "1g", explainS, paramsText, paramsFile, saveParams, algo, tune;
  int hosts = 0, perHost = 1, ranks = 0;
  bool calibrate = false;
  std::string measure;
  int rounds = 5;
  std::string placement = "linear";
  app.add_option("--topo", json, "Topology JSON file (loom-topo --dump)");
  app.add_option("--ibnet", ibnet, "ibnetdiscover output file");
  app.add_option("--gen", gen, "Generator spec, e.g. fat-tree:levels=2,hostsPerLeaf=16,...");
  app.add_option("--hosts", hosts, "Without a fabric: number of hosts (flat network)");
  app.add_option("--ranks-per-host", perHost, "Ranks (GPUs / processes) per host");
  app.add_option("--ranks", ranks, "Rank count (default: hosts x ranks-per-host)");
  app.add_option("--coll", collName, "allreduce, broadcast, reduce, allgather, reducescatter");
  app.add_option("--dtype", dtypeName, "float32, float16, ...");
  app.add_option("--transport", transport, "Between hosts: net (RDMA) or tcp");
  app.add_option("--min", minS, "Smallest size (bytes; k/m/g suffixes)");
  app.add_option("--max", maxS, "Largest size");
  app.add_option("--explain", explainS, "Print every candidate for this size");
  app.add_option("--params", paramsText, "Cost parameters key=value,... (see --calibrate)");
  app.add_option("--params-file", paramsFile, "Read cost parameters from this file");
  app.add_option("--save-params", saveParams, "With --calibrate: write the parameters here");
  app.add_option("--algo", algo, "As LOOM_ALGO");
  app.add_option("--tune", tune, "As LOOM_TUNE");
  bool simulate = false;
  loomplan::SimulateOptions simOpt;
  loomplan::addSimulateOptions(&app, &simulate, &simOpt);
  app.add_option("--placement", placement,
                 "linear: rank r on host r / ranks-per-host; scatter: hosts in a seeded random "
                 "order (a job spread over the machine by its scheduler)");
  app.add_flag("--calibrate", calibrate,
               "Fit the cost model to this machine: measures every all-reduce algorithm forced "
               "(2, 4, 8 ranks over shm and tcp, 8 B-16 MiB, 3 rounds; under a minute on 2 "
               "cores), or reads --from-json; prints the parameters (LOOM_PLAN_PARAMS)");
  bool tuningTable = false;
  app.add_flag("--tuning-table", tuningTable,
               "With --calibrate: also store the tuning table (tuned.*: the measured fastest "
               "algorithm per transport, rank count and size bucket; off by default, it did not "
               "beat the model alone in validation runs, perf/planner/README.md)");
  app.add_option("--measure", measure,
                 "shm or tcp: time all-reduce with every algorithm forced and with the planner's "
                 "choice on --ranks forked ranks, sizes --min to --max x4 (and --max), in "
                 "interleaved --rounds; prints one JSON line per size");
  app.add_option("--rounds", rounds, "With --measure: rounds over all candidates");
  std::vector<std::string> measureAlgos;
  app.add_option("--algos", measureAlgos,
                 "With --measure: only these candidates (all-reduce algorithms, direct, planner), "
                 "one communicator each (default: every algorithm, direct over shm, planner)")
      ->delimiter(',');
  bool forcedOnly = false;
  app.add_flag("--forced-only", forcedOnly,
               "With --measure: only the forced algorithms (and direct), as --calibrate needs");
  uint64_t directBytes = 0;
  app.add_option("--direct-bytes", directBytes,
                 "One host: the communicator's direct path takes all-reduces up to this many "
                 "bytes (LOOM_SHM_DIRECT_BYTES; a candidate the planner prices)");
  std::vector<std::string> fromJson;
  app.add_option("--from-json", fromJson,
                 "With --calibrate: fit to these files of --measure lines instead of measuring");
  CLI11_PARSE(app, argc, argv);
  if (!measure.empty())
    return loomplan::measureMain(measure, ranks, minS, maxS, rounds, paramsFile, forcedOnly,
                                 measureAlgos);

  plan::CostParams params;
  if (calibrate) {
    Status s = loomplan::calibrate(fromJson, &params, true);
    if (!s.ok()) {
      std::cerr << "loom-plan: calibration failed: " << s.toString() << "\n";
      return 1;
    }
    if (!tuningTable) params.tuned.clear();
    std::cout << params.toString() << "\n";
    if (!saveParams.empty()) std::ofstream(saveParams) << params.toString() << "\n";
    return 0;
  }
  if (!paramsFile.empty()) {
    std::ifstream in(paramsFile);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in) {
      std::cerr << "loom-plan: cannot read " << paramsFile << "\n";
      return 1;
    }
    paramsText = ss.str() + "," + paramsText;
  }
  if (Status s = plan::CostParams::parse(paramsText, &params); !s.ok()) {
    std::cerr << "loom-plan: " << s.toString() << "\n";
    return 1;
  }
  topo::Topology t;
  if (Status s = loadTopo(json, ibnet, gen, &t); !s.ok()) {
    std::cerr << "loom-plan: " << s.toString() << "\n";
    return 1;
  }
  const bool haveFabric = !t.hosts.empty();
  if (haveFabric) hosts = static_cast<int>(t.hosts.size());
  if (hosts <= 0) hosts = ranks > 0 ? (ranks + perHost - 1) / perHost : 1;
  if (ranks <= 0) ranks = hosts * perHost;
  if (ranks > hosts * perHost) {
    std::cerr << "loom-plan: " << ranks << " ranks do not fit " << hosts << " hosts x " << perHost
              << "\n";
    return 1;
  }
  plan::PlannerContext ctx;
  ctx.nranks = ranks;
  std::vector<int> hostOrder(hosts);
  for (int h = 0; h < hosts; ++h) hostOrder[h] = h;
  if (placement == "scatter") {
    std::mt19937 rng(1);
    std::shuffle(hostOrder.begin(), hostOrder.end(), rng);
  } else if (placement != "linear") {
    std::cerr << "loom-plan: --placement is linear or scatter\n";
    return 1;
  }
  for (int r = 0; r < ranks; ++r) ctx.hostOf.push_back(hostOrder[r / perHost]);
  ctx.interHost = transport == "tcp" ? plan::Transport::kTcp : plan::Transport::kNet;
  ctx.topology = haveFabric ? &t : nullptr;
  ctx.params = params;
  ctx.readEnv = false;
  ctx.algo = algo;
  ctx.tune = tune;
  if (hosts == 1) ctx.directBytes = directBytes;
  plan::Planner planner(ctx);
  if (!planner.status().ok()) {
    std::cerr << "loom-plan: " << planner.status().toString() << "\n";
    return 1;
  }
  sched::CollArgs args;
  if (Status s = plan::parseCollName(collName, &args.coll); !s.ok()) {
    std::cerr << "loom-plan: " << s.toString() << "\n";
    return 1;
  }
  bool dtOk = false;
  for (int d = 0; d < kNumDataTypes; ++d)
    if (dtypeName == loom::dtypeName(static_cast<DataType>(d)))
      args.dtype = static_cast<DataType>(d), dtOk = true;
  if (!dtOk) {
    std::cerr << "loom-plan: unknown dtype " << dtypeName << "\n";
    return 1;
  }
  const uint64_t es = dtypeSize(args.dtype);
  auto countFor = [&](uint64_t bytes) {
    uint64_t c = std::max<uint64_t>(1, bytes / es);
    if (args.coll == sched::CollType::kAllGather || args.coll == sched::CollType::kReduceScatter)
      c = std::max<uint64_t>(1, c / ranks);
    return c;
  };
  std::cout << "# loom-plan: " << collName << " " << dtypeName << ", " << ranks << " ranks on "
            << hosts << " hosts, fabric "
            << (haveFabric ? topo::fabricTypeName(t.cls.type) : "none (flat)") << ", inter-host "
            << transport << ", placement " << placement << "\n# params " << params.toString()
            << "\n";
  if (!explainS.empty()) {
    uint64_t b;
    if (Status s = plan::parseSize(explainS, &b); !s.ok()) {
      std::cerr << "loom-plan: " << s.toString() << "\n";
      return 1;
    }
    args.count = countFor(b);
    std::cout << planner.explain(args);
    return 0;
  }
  uint64_t lo, hi;
  if (!plan::parseSize(minS, &lo).ok() || !plan::parseSize(maxS, &hi).ok()) {
    std::cerr << "loom-plan: bad --min/--max\n";
    return 1;
  }
  if (simulate)
    return loomplan::simulateMain(&planner,
                                  {haveFabric ? &t : nullptr, hosts, perHost, ranks, ctx.hostOf,
                                   ctx.interHost, params, simOpt},
                                  args, lo, hi, countFor);
  std::vector<std::string> names;
  for (const algo::AlgoInfo* a : algo::algosFor(args.coll)) names.push_back(a->name);
  std::printf("%8s", "size");
  for (auto& n : names) std::printf(" | %-27s", (n + " us/algbw/busbw").c_str());
  std::printf(" | choice\n");
  for (uint64_t b = lo; b <= hi; b *= 2) {
    args.count = countFor(b);
    const uint64_t bytes = plan::Planner::messageBytes(args, ranks);
    std::map<std::string, const plan::Decision*> best;
    std::vector<plan::Decision> cands = planner.candidates(args);
    for (const plan::Decision& d : cands)
      if (!best.count(d.algo->name)) best[d.algo->name] = &d;
    std::printf("%8s", human(bytes).c_str());
    for (auto& n : names) {
      if (!best.count(n)) {
        std::printf(" | %-27s", "-");
        continue;
      }
      double tsec = best[n]->predictedSec, alg = bytes / tsec / 1e9;
      char cell[64];
      std::snprintf(cell, sizeof cell, "%10.1f %7.2f %7.2f", tsec * 1e6, alg,
                    alg * plan::Planner::busFactor(args.coll, ranks));
      std::printf(" | %-27s", cell);
    }
    const plan::Decision& d = planner.choose(args);
    std::printf(" | %s\n", d.describe().c_str());
  }
  return 0;
}
