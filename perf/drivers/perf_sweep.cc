#include "perf_sweep.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "perf_backend.h"
#include "perf_data.h"
#include "perf_report.h"

namespace loom::perf {
namespace {

struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<char, FreeDeleter>;

Buffer allocBuffer(size_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, 4096, bytes < 4096 ? 4096 : bytes) != 0) return nullptr;
  std::memset(p, 0, bytes);  // fault the pages in before anything is timed
  return Buffer(static_cast<char*>(p));
}

struct SweepCtx {
  const Options& opts;
  Coord& coord;
  Backend& backend;
  char* send;
  char* recv;
};

// This process's CPU time (all its threads, user and system), in microseconds.
double processCpuUs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// This host's steal and total CPU ticks so far (/proc/stat's first line: the time the hypervisor
// ran something else while a vCPU wanted to run, and the sum of all columns); false where the
// file is unreadable (not Linux, or a kernel without the steal column).
bool hostTicks(unsigned long long* steal, unsigned long long* total) {
  FILE* f = std::fopen("/proc/stat", "r");
  if (f == nullptr) return false;
  unsigned long long v[8] = {};
  int n = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                      &v[4], &v[5], &v[6], &v[7]);
  std::fclose(f);
  if (n != 8) return false;
  *steal = v[7];
  *total = 0;
  for (unsigned long long x : v) *total += x;
  return true;
}

void runOrAbort(SweepCtx& ctx, const CollCall& call, int rc, const char* what) {
  if (rc == 0) return;
  std::fprintf(stderr, "rank %d: %s_perf backend %s: %s failed (count %zu, %s): %s\n",
               ctx.coord.rank(), call.coll->name, ctx.backend.name(), what, call.count,
               typeName(call.dt), ctx.backend.lastError().c_str());
  ctx.coord.abortAll(3);
}

// Warm-up, the timed loop (between two coordinator barriers), then the checked iterations.
PlacementResult measure(SweepCtx& ctx, CollCall call, const CollSizes& sizes, int nranks) {
  PlacementResult res;
  placeBuffers(&call, sizes, ctx.send, ctx.recv);
  res.why = ctx.backend.unsupported(call);
  if (!res.why.empty()) return res;  // every rank decides the same way
  res.na = false;
  fillInputs(call, sizes);
  for (int i = 0; i < ctx.opts.warmup; ++i) runOrAbort(ctx, call, ctx.backend.run(call), "warm-up");
  runOrAbort(ctx, call, ctx.backend.sync(), "warm-up sync");
  ctx.coord.barrier();
  unsigned long long steal0 = 0, total0 = 0, steal1 = 0, total1 = 0;
  bool ticks = hostTicks(&steal0, &total0);
  const double cpu0 = processCpuUs();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < ctx.opts.iters; ++i) runOrAbort(ctx, call, ctx.backend.run(call), "call");
  runOrAbort(ctx, call, ctx.backend.sync(), "sync");
  auto t1 = std::chrono::steady_clock::now();
  const double cpu = (processCpuUs() - cpu0) / ctx.opts.iters;
  ticks = hostTicks(&steal1, &total1) && ticks;
  // A loop shorter than a tick (10 ms) sees none: 0, not unknown.
  double steal = !ticks            ? -1.0
                 : total1 > total0 ? 100.0 * static_cast<double>(steal1 - steal0) /
                                         static_cast<double>(total1 - total0)
                                   : 0.0;
  double us = std::chrono::duration<double, std::micro>(t1 - t0).count() / ctx.opts.iters;
  res.timeUs = ctx.coord.sum(us) / nranks;
  res.cpuUs = ctx.coord.sum(cpu);
  res.stealPct = ctx.coord.max(steal);
  double wrong = 0;
  for (int i = 0; i < ctx.opts.check; ++i) {
    fillInputs(call, sizes);
    runOrAbort(ctx, call, ctx.backend.run(call), "checked call");
    runOrAbort(ctx, call, ctx.backend.sync(), "checked sync");
    wrong += static_cast<double>(countWrong(call, sizes));
  }
  res.wrong = ctx.opts.check > 0 ? static_cast<long long>(ctx.coord.sum(wrong)) : -1;
  return res;
}

size_t largestBuffer(const Options& opts, const CollInfo& coll, int nranks) {
  size_t most = 0;
  for (loomDataType_t dt : opts.types) {
    for (size_t bytes : sweepSizes(opts)) {
      size_t b = collSizes(coll, bytes, typeSize(dt), nranks).sizeBytes;
      most = b > most ? b : most;
    }
  }
  return most;
}

}  // namespace

int runRank(const Options& opts, const CollInfo& coll, Coord& coord) {
  const int n = coord.size();
  // Every rank sees these errors; rank 0 says so, and the others leave only after it has (a
  // launcher stops all ranks when the first one exits with an error).
  if (coll.rooted && opts.root >= n) {
    if (coord.rank() == 0) std::fprintf(stderr, "-r %d: only %d ranks\n", opts.root, n);
    coord.max(1);
    return 2;
  }
  if (opts.pairwise && n % 2 != 0) {
    if (coord.rank() == 0)
      std::fprintf(stderr, "--pairwise 1 needs an even rank count (got %d ranks)\n", n);
    coord.max(1);
    return 2;
  }
  std::string error;
  std::unique_ptr<Backend> backend = makeBackend(opts, coord, &error);
  if (!backend) std::fprintf(stderr, "rank %d: %s\n", coord.rank(), error.c_str());
  if (coord.max(backend ? 0 : 1) != 0) return 2;
  const size_t bytes = largestBuffer(opts, coll, n);
  Buffer send = allocBuffer(bytes), recv = allocBuffer(bytes);
  if (!send || !recv) {
    std::fprintf(stderr, "rank %d: cannot allocate 2 x %zu bytes\n", coord.rank(), bytes);
    coord.abortAll(2);
  }
  Report report(opts, coll, backend->name(), coord);
  if (!report.ok()) std::fprintf(stderr, "%s\n", report.error().c_str());
  report.header();
  SweepCtx ctx{opts, coord, *backend, send.get(), recv.get()};
  long long wrong = 0;
  std::vector<loomRedOp_t> ops = coll.reduces ? opts.ops : std::vector<loomRedOp_t>{loomSum};
  for (loomDataType_t dt : opts.types) {
    for (loomRedOp_t op : ops) {
      for (size_t size : sweepSizes(opts)) {
        CollSizes sizes = collSizes(coll, size, typeSize(dt), n);
        if (sizes.count == 0) continue;  // fewer elements than ranks: nothing to time
        CollCall call;
        call.coll = &coll;
        call.dt = dt;
        call.op = op;
        call.root = opts.root;
        call.rank = coord.rank();
        call.nranks = n;
        if (opts.msgBytes > 0) call.msgCount = std::max<size_t>(1, opts.msgBytes / typeSize(dt));
        call.lockstep = opts.lockstep;
        call.pairwise = opts.pairwise;
        RowResult row;
        row.size = sizes.sizeBytes;
        row.count = sizes.count;
        row.dt = dt;
        row.redop = coll.reduces ? opName(op) : "none";
        row.root = coll.rooted ? opts.root : -1;
        // nccl-tests' order, out of place then in place, unless --ip-first.
        for (bool inPlace : {opts.ipFirst, !opts.ipFirst}) {
          call.inPlace = inPlace;
          (inPlace ? row.ip : row.oop) = measure(ctx, call, sizes, n);
        }
        for (PlacementResult* p : {&row.oop, &row.ip}) {
          if (p->na) continue;
          p->algbw = sizes.algBytes / 1e3 / p->timeUs;  // bytes/us/1e3 = GB/s
          p->busbw = p->algbw * busFactor(coll, n);
          if (p->wrong > 0) wrong += p->wrong;
        }
        report.row(row);
      }
    }
  }
  report.footer();
  coord.barrier();
  return wrong > 0 ? 1 : 0;
}

int driverMain(int argc, char** argv, const char* collName) {
  Options opts;
  opts.coll = collName;
  std::string error;
  if (!parseOptions(argc, argv, &opts, &error)) {
    std::fprintf(stderr, "%s: %s (try --help)\n", argv[0], error.c_str());
    return 2;
  }
  const CollInfo* coll = findColl(opts.coll);
  if (opts.showHelp || coll == nullptr) {
    if (coll == nullptr) std::fprintf(stderr, "unknown collective '%s'\n", opts.coll.c_str());
    printUsage(argv[0]);
    return coll == nullptr ? 2 : 0;
  }
  if (opts.msgBytes > 0 && (coll->kind != CollKind::kSendRecv || opts.backend != "loom")) {
    std::fprintf(stderr, "%s: --msg-bytes applies to sendrecv with the loom backend only\n",
                 argv[0]);
    return 2;
  }
  if (opts.pairwise && coll->kind != CollKind::kSendRecv) {
    std::fprintf(stderr, "%s: --pairwise applies to sendrecv only\n", argv[0]);
    return 2;
  }
  if (opts.lockstep && opts.msgBytes == 0) {
    std::fprintf(stderr, "%s: --lockstep 1 needs --msg-bytes\n", argv[0]);
    return 2;
  }
  if (!opts.algo.empty()) {  // read by the library when the communicator is made
    std::string value = opts.algo.find(':') == std::string::npos
                            ? std::string(coll->algoName) + ":" + opts.algo
                            : opts.algo;
    setenv("LOOM_ALGO", value.c_str(), 1);
  }
  auto body = [&](Coord& coord) { return runRank(opts, *coll, coord); };
  if (launchedByMpi()) {
    if (opts.ranks > 0) std::fprintf(stderr, "note: --ranks is ignored under mpirun\n");
    return runMpi(&argc, &argv, body);
  }
  return runForked(opts.ranks > 0 ? opts.ranks : 1, opts.timeoutSec, opts.bind, body);
}

}  // namespace loom::perf
