#include "perf_report.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "perf_data.h"

namespace loom::perf {
namespace {

struct RankInfo {
  int pid;
  char host[64];
  char cpus[96];  // the CPUs this rank may run on, as ranges: "1" or "0-1,4"
};

// This process's CPU affinity as "a-b,c" ranges ("?" if it cannot be read), at most n-1 chars.
void affinityRanges(char* out, size_t n) {
  const std::vector<int> cpus = allowedCpus();
  std::string s = cpus.empty() ? "?" : "";
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    s += (i ? "," : "") + std::to_string(cpus[i]) + (j > i ? "-" + std::to_string(cpus[j]) : "");
    i = j + 1;
  }
  std::snprintf(out, n, "%s", s.c_str());
}

std::string envOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : fallback;
}

}  // namespace

Report::Report(const Options& opts, const CollInfo& coll, const char* backend, Coord& coord)
    : opts_(opts), coll_(coll), backend_(backend), coord_(coord), printing_(coord.rank() == 0) {
  if (printing_ && !opts.jsonFile.empty()) {
    json_ = std::fopen(opts.jsonFile.c_str(), "a");
    if (json_ == nullptr) jsonError_ = "-J " + opts.jsonFile + ": " + std::strerror(errno);
  }
}

Report::~Report() {
  if (json_ != nullptr) std::fclose(json_);
}

void Report::header() {
  RankInfo me{};
  me.pid = static_cast<int>(getpid());
  gethostname(me.host, sizeof(me.host) - 1);
  affinityRanges(me.cpus, sizeof(me.cpus));
  std::vector<RankInfo> all(coord_.size());
  coord_.allgather(&me, sizeof(me), all.data());
  if (!printing_) return;
  int version = 0;
  loomGetVersion(&version);
  std::printf("# loom perf %s_perf  backend: %s  loom-library=%d  launcher: %s  transport: %s\n",
              coll_.name, backend_.c_str(), version, coord_.kind(),
              envOr("LOOM_TRANSPORT", "auto").c_str());
  std::printf("# Collective test starting: %s_perf\n", coll_.name);
  std::printf("# nRanks %d nThread 1 nGpus 1 minBytes %zu maxBytes %zu step: ", coord_.size(),
              opts_.minBytes, opts_.maxBytes);
  if (opts_.stepFactor > 1)
    std::printf("%g(factor)", opts_.stepFactor);
  else
    std::printf("%zu(bytes)", opts_.stepBytes);
  std::printf(" warmup iters: %d iters: %d agg iters: 1 validation: %d blocking: %d algo: %s\n",
              opts_.warmup, opts_.iters, opts_.check, opts_.blocking ? 1 : 0,
              envOr("LOOM_ALGO", "auto").c_str());
  std::printf("#\n# Using devices\n");
  for (int r = 0; r < coord_.size(); ++r) {
    std::printf("#  Rank %2d Group  0 Pid %6d on %10s device  0 [cpu] host memory, CPUs %s\n", r,
                all[r].pid, all[r].host, all[r].cpus);
  }
  std::printf("#\n");
  std::printf("#%63s%38s\n", "out-of-place", "in-place");
  std::printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "size",
              "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
              "busbw", "#wrong");
  std::printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "(B)",
              "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
              "");
  std::fflush(stdout);
}

void Report::printPlacement(const PlacementResult& p) {
  if (p.na) {
    std::printf("  %7s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");
    return;
  }
  const char* fmt = p.timeUs >= 10000.0 ? "  %7.0f" : (p.timeUs >= 100.0 ? "  %7.1f" : "  %7.2f");
  std::printf(fmt, p.timeUs);
  std::printf("  %6.2f  %6.2f", p.algbw, p.busbw);
  if (p.wrong < 0)
    std::printf("  %6s", "N/A");
  else
    std::printf("  %6lld", p.wrong);
  busbwSum_ += p.busbw;
  ++busbwCount_;
  if (p.wrong > 0) wrong_ += p.wrong;
}

void Report::jsonPlacement(const PlacementResult& p) {
  if (p.na) {
    std::fprintf(json_, "null");
    return;
  }
  std::fprintf(json_,
               "{\"time_us\":%.3f,\"cpu_us\":%.3f,\"steal_pct\":%.2f,\"algbw\":%.4f,"
               "\"busbw\":%.4f,\"wrong\":%lld}",
               p.timeUs, p.cpuUs, p.stealPct, p.algbw, p.busbw, p.wrong);
}

void Report::row(const RowResult& r) {
  if (!printing_) return;
  std::printf("%12zu  %12zu  %8s  %6s  %6d", r.size, r.count, typeName(r.dt), r.redop, r.root);
  printPlacement(r.oop);
  printPlacement(r.ip);
  std::printf("\n");
  std::fflush(stdout);
  if (json_ == nullptr) return;
  std::fprintf(json_,
               "{\"coll\":\"%s\",\"backend\":\"%s\",\"nranks\":%d,\"launcher\":\"%s\","
               "\"transport\":\"%s\",\"algo\":\"%s\",\"size\":%zu,\"count\":%zu,\"type\":\"%s\","
               "\"redop\":\"%s\",\"root\":%d,\"oop\":",
               coll_.name, backend_.c_str(), coord_.size(), coord_.kind(),
               envOr("LOOM_TRANSPORT", "auto").c_str(), envOr("LOOM_ALGO", "").c_str(), r.size,
               r.count, typeName(r.dt), r.redop, r.root);
  jsonPlacement(r.oop);
  std::fprintf(json_, ",\"ip\":");
  jsonPlacement(r.ip);
  std::fprintf(json_, "}\n");
  std::fflush(json_);
}

long long Report::footer() {
  if (printing_) {
    std::printf("# Out of bounds values : %lld %s\n", wrong_, wrong_ == 0 ? "OK" : "FAILED");
    std::printf("# Avg bus bandwidth    : %g\n", busbwCount_ ? busbwSum_ / busbwCount_ : 0.0);
    std::printf("#\n# Collective test concluded: %s_perf\n", coll_.name);
    if (wrong_ != 0) std::printf("# FAILED: %lld wrong elements\n", wrong_);
    std::fflush(stdout);
  }
  return wrong_;
}

}  // namespace loom::perf
