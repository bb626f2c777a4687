// Interleaved all-reduce measurement through loom's C API, and the calibration built on it.
#include "calibrate.h"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "core/params.h"
#include "kernels/reduce.h"
#include "loom/loom.h"
#include "plan/planner.h"

namespace loomplan {
namespace {

using Clock = std::chrono::steady_clock;
using loom::Status;

// LOOM_SHM_DIRECT_BYTES where the library has it (0 otherwise).
uint64_t directBytes() {
  for (const loom::params::ParamInfo& p : loom::params::all())
    if (std::string(p.env) == "LOOM_SHM_DIRECT_BYTES")
      return std::strtoull(p.value.c_str(), nullptr, 0);
  return 0;
}

// Calls per timed batch: enough that a batch of small calls lasts a few milliseconds.
int batchCalls(uint64_t bytes) {
  return static_cast<int>(std::clamp<uint64_t>((1u << 21) / std::max<uint64_t>(bytes, 1), 1, 100));
}

// Sets the environment for the next communicator made in this process: LOOM_ALGO forcing `algo`;
// nothing forced for "" (the library as it is) and for "planner" (the planner's choice always:
// the one-host direct path off, LOOM_SHM_DIRECT_BYTES=0).
void forceAlgo(const std::string& algo, const std::string& paramsFile) {
  static const char* direct = std::getenv("LOOM_SHM_DIRECT_BYTES");  // the user's, kept for ""
  static const std::string userDirect = direct ? direct : "";
  if (algo.empty() || algo == "planner")
    unsetenv("LOOM_ALGO");
  else
    setenv("LOOM_ALGO", ("allreduce:" + algo).c_str(), 1);
  if (algo == "planner")
    setenv("LOOM_SHM_DIRECT_BYTES", "0", 1);
  else if (direct)
    setenv("LOOM_SHM_DIRECT_BYTES", userDirect.c_str(), 1);
  else
    unsetenv("LOOM_SHM_DIRECT_BYTES");
  unsetenv("LOOM_TUNE");
  if (!paramsFile.empty()) setenv("LOOM_PLAN_PARAMS", ("@" + paramsFile).c_str(), 1);
  loom::params::resetCacheForTesting();
}

// Memory shared by the forked ranks: the unique ids (made by rank 0: loomGetUniqueId starts the
// bootstrap root in the calling process, which must not be forked afterwards) and the results,
// [algo][size][round][rank].
struct Shared {
  volatile int* idsReady;
  loomUniqueId* ids;
  double* us;
  size_t index(const MeasureSpec& m, size_t a, size_t s, int r, int rank) const {
    return ((a * m.sizes.size() + s) * m.rounds + r) * m.ranks + rank;
  }
};

// One rank: a communicator per candidate, then rounds x sizes x candidates. Exit status 0 = ok.
int rankMain(const MeasureSpec& m, int rank, Shared sh) {
  if (rank == 0) {
    for (size_t a = 0; a < m.algos.size(); ++a)
      if (loomGetUniqueId(&sh.ids[a]) != loomSuccess) return 2;
    __atomic_store_n(sh.idsReady, 1, __ATOMIC_RELEASE);
  }
  while (!__atomic_load_n(sh.idsReady, __ATOMIC_ACQUIRE)) usleep(1000);
  loomConfig_t cfg = LOOM_CONFIG_INITIALIZER;
  cfg.transport = m.transport.c_str();
  cfg.timeoutMs = 120000;
  const size_t na = m.algos.size();
  std::vector<loomComm_t> comms(na);
  for (size_t a = 0; a < na; ++a) {
    forceAlgo(m.algos[a], m.paramsFile);
    if (loomCommInitRankConfig(&comms[a], m.ranks, sh.ids[a], rank, &cfg) != loomSuccess) {
      std::cerr << "rank " << rank << ": init failed: " << loomGetLastError(nullptr) << "\n";
      return 2;
    }
  }
  const uint64_t most = *std::max_element(m.sizes.begin(), m.sizes.end());
  std::vector<float> in(most / 4 + 1, static_cast<float>(rank + 1)), out(in.size());
  const float want = m.ranks * (m.ranks + 1) / 2.0f;
  for (size_t s = 0; s < m.sizes.size(); ++s) {
    const size_t count = std::max<uint64_t>(1, m.sizes[s] / 4);
    const int k = batchCalls(m.sizes[s]);
    for (int r = 0; r < m.rounds; ++r) {
      for (size_t j = 0; j < na; ++j) {
        // Rotate the order every round, and reverse it every other round.
        size_t a = (j + r) % na;
        if (r % 2) a = na - 1 - a;
        loomComm_t c = comms[a];
        // A warm-up call (and the check) before every batch of small calls; large ones need
        // it only the first time (their batch is one call, a warm-up would double the time).
        const bool warm = r == 0 || m.sizes[s] < (1u << 20);
        if (warm && loomAllReduce(in.data(), out.data(), count, loomFloat32, loomSum, c, nullptr) !=
                        loomSuccess)
          return 3;
        if (r == 0 && (out[0] != want || out[count - 1] != want)) {
          std::cerr << "rank " << rank << ": wrong result with " << m.algos[a] << " at "
                    << m.sizes[s] << " B\n";
          return 4;
        }
        if (loomBarrier(c, nullptr) != loomSuccess) return 3;
        auto t0 = Clock::now();
        for (int i = 0; i < k; ++i)
          if (loomAllReduce(in.data(), out.data(), count, loomFloat32, loomSum, c, nullptr) !=
              loomSuccess)
            return 3;
        sh.us[sh.index(m, a, s, r, rank)] =
            std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / k;
      }
    }
  }
  for (loomComm_t c : comms) loomCommDestroy(c);
  return 0;
}

}  // namespace

double Measured::medianUs(size_t a, size_t s) const {
  std::vector<double> v = us[a][s];
  std::sort(v.begin(), v.end());
  return v.empty()      ? 0
         : v.size() % 2 ? v[v.size() / 2]
                        : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

double Measured::minUs(size_t a, size_t s) const {
  return us[a][s].empty() ? 0 : *std::min_element(us[a][s].begin(), us[a][s].end());
}

Status measureAllReduce(const MeasureSpec& m, Measured* out) {
  if (m.ranks < 1) return loom::invalidArgument("measure: ranks must be >= 1");
  if (m.transport != "shm" && m.transport != "tcp")
    return loom::invalidArgument("measure: transport must be shm or tcp, not '", m.transport, "'");
  if (m.sizes.empty() || m.algos.empty() || m.rounds < 1)
    return loom::invalidArgument("measure: needs sizes, algorithms and rounds >= 1");
  for (const std::string& a : m.algos)
    if (!a.empty() && a != "planner" && !loom::algo::findAlgo(loom::sched::CollType::kAllReduce, a))
      return loom::invalidArgument("measure: '", a, "' is not an all-reduce algorithm");
  const size_t cells = m.algos.size() * m.sizes.size() * m.rounds * m.ranks;
  const size_t head = 64 + (m.algos.size() * sizeof(loomUniqueId) + 7) / 8 * 8;
  const size_t bytes = head + cells * sizeof(double);
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return loom::errnoStatus("mmap", errno);
  char* base = static_cast<char*>(mem);
  Shared sh{reinterpret_cast<int*>(base), reinterpret_cast<loomUniqueId*>(base + 64),
            reinterpret_cast<double*>(base + head)};
  std::vector<pid_t> pids(m.ranks);
  for (int r = 0; r < m.ranks; ++r) {
    pids[r] = fork();
    if (pids[r] == 0) _exit(rankMain(m, r, sh));
  }
  int bad = 0;
  for (pid_t p : pids) {
    int st = 0;
    waitpid(p, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) bad = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  out->us.assign(m.algos.size(), std::vector<std::vector<double>>(m.sizes.size()));
  for (size_t a = 0; a < m.algos.size(); ++a)
    for (size_t s = 0; s < m.sizes.size(); ++s)
      for (int r = 0; r < m.rounds; ++r) {
        double sum = 0;
        for (int k = 0; k < m.ranks; ++k) sum += sh.us[sh.index(m, a, s, r, k)];
        out->us[a][s].push_back(sum / m.ranks);
      }
  munmap(mem, bytes);
  if (bad)
    return loom::systemError("measure: a rank over ", m.transport, " failed (exit status ", bad,
                             ")");
  // The planner's choice, from a planner set up as the communicator's (api/comm.cc: a forced
  // transport puts every rank on one host for shm, on its own host for tcp).
  forceAlgo("", m.paramsFile);
  loom::plan::PlannerContext ctx;
  ctx.nranks = m.ranks;
  for (int r = 0; r < m.ranks; ++r) ctx.hostOf.push_back(m.transport == "tcp" ? r : 0);
  loom::plan::Planner planner(ctx);
  LOOM_CHECK(planner.status());
  out->choice.clear();
  for (uint64_t b : m.sizes) {
    loom::sched::CollArgs args;
    args.coll = loom::sched::CollType::kAllReduce;
    args.dtype = loom::DataType::kFloat32;
    args.count = std::max<uint64_t>(1, b / 4);
    out->choice.push_back(planner.choose(args).describe());
  }
  return Status();
}

int measureMain(const std::string& transport, int ranks, const std::string& minSize,
                const std::string& maxSize, int rounds, const std::string& paramsFile) {
  MeasureSpec m;
  m.transport = transport;
  m.ranks = ranks > 0 ? ranks : 2;
  m.rounds = rounds;
  m.paramsFile = paramsFile;
  uint64_t lo = 0, hi = 0;
  if (!loom::plan::parseSize(minSize, &lo).ok() || !loom::plan::parseSize(maxSize, &hi).ok() ||
      lo == 0 || hi < lo) {
    std::cerr << "loom-plan: bad --min/--max for --measure\n";
    return 1;
  }
  for (uint64_t b = lo; b < hi; b *= 4) m.sizes.push_back(b);
  m.sizes.push_back(hi);
  for (const loom::algo::AlgoInfo* a : loom::algo::algosFor(loom::sched::CollType::kAllReduce))
    m.algos.push_back(a->name);
  m.algos.push_back("planner");
  // A one-host communicator takes small all-reduces past the planner (api/shm_direct.h): the
  // library as it is differs from the planner's choice there.
  const uint64_t direct = transport == "shm" ? directBytes() : 0;
  if (direct > 0) m.algos.push_back("");
  Measured res;
  if (Status s = measureAllReduce(m, &res); !s.ok()) {
    std::cerr << "loom-plan: " << s.toString() << "\n";
    return 1;
  }
  for (size_t s = 0; s < m.sizes.size(); ++s) {
    std::cout << "{\"transport\":\"" << transport << "\",\"ranks\":" << m.ranks
              << ",\"size\":" << m.sizes[s] << ",\"choice\":\"" << res.choice[s]
              << "\",\"direct\":" << (m.sizes[s] <= direct ? "true" : "false");
    for (size_t a = 0; a < m.algos.size(); ++a) {
      const std::string name = m.algos[a].empty() ? "library" : m.algos[a];
      std::cout << ",\"" << name << "\":{\"median_us\":" << res.medianUs(a, s)
                << ",\"min_us\":" << res.minUs(a, s) << "}";
    }
    std::cout << "}" << std::endl;
  }
  return 0;
}

namespace {

// One calibration point: an algorithm forced at one (transport, ranks, size), its median time and
// the model's terms for it.
struct Point {
  std::string algo, transport;
  int ranks;
  uint64_t bytes;
  double us;
  loom::plan::CostModel::Terms terms;
};

loom::plan::PlannerContext plannerFor(const loom::plan::CostParams& params, int ranks,
                                      const std::string& transport, const std::string& algo) {
  loom::plan::PlannerContext ctx;
  ctx.nranks = ranks;
  for (int r = 0; r < ranks; ++r) ctx.hostOf.push_back(transport == "tcp" ? r : 0);
  ctx.params = params;
  ctx.readEnv = false;
  ctx.chunkBytes = static_cast<uint64_t>(loom::params::chunkBytes());
  if (!algo.empty()) ctx.algo = "allreduce:" + algo;
  return ctx;
}

loom::sched::CollArgs allReduceArgs(uint64_t bytes) {
  loom::sched::CollArgs a;
  a.coll = loom::sched::CollType::kAllReduce;
  a.dtype = loom::DataType::kFloat32;
  a.count = std::max<uint64_t>(1, bytes / 4);
  return a;
}

// The model's terms for a point: the variant (chunk, order) its forced planner picks under
// `params`.
Status termsOf(const loom::plan::CostParams& params, Point* pt) {
  loom::plan::Planner pl(plannerFor(params, pt->ranks, pt->transport, pt->algo));
  LOOM_CHECK(pl.status());
  const loom::sched::CollArgs args = allReduceArgs(pt->bytes);
  const loom::plan::Decision& d = pl.choose(args);
  if (!d.algo) return loom::internalError("calibrate: no decision for ", pt->algo);
  std::vector<loom::plan::Round> rounds;
  LOOM_CHECK(pl.rounds(args, d, &rounds));
  pt->terms = pl.model().terms(rounds, loom::plan::Planner::pipelined(pt->algo));
  return Status();
}

// Predicted us of a point under a fit, as CostModel::price adds it up.
double predictUs(const loom::plan::AlgoFit& f, const loom::plan::CostModel::Terms& t) {
  return f.baseUs + t.fixed * 1e6 + f.roundUs * t.rounds + f.wakeUs * t.wakes +
         t.transfer * 1e6 / f.bwEff;
}

// Least squares for y = base + roundUs R + wakeUs W + invEff T (R, W, T: the model's terms),
// weighted by 1/measured (relative error), with base, wakeUs >= 0, roundUs >= minRoundUs and
// invEff > 0: the best feasible solution over the subsets of {base, roundUs - minRoundUs, wakeUs}
// (invEff always in). minRoundUs < 0 lets the fit take back part of alpha, which two ranks'
// recursive doubling measured together with the per-call cost.
loom::plan::AlgoFit fitPoints(const std::vector<const Point*>& pts, double minRoundUs) {
  constexpr int kCols = 4;  // base, roundUs - minRoundUs, wakeUs, invEff
  loom::plan::AlgoFit best;
  double bestErr = -1;
  for (int mask = 0; mask < 8; ++mask) {
    std::vector<int> cols = {3};
    for (int c = 0; c < 3; ++c)
      if (mask & (1 << c)) cols.push_back(c);
    const size_t n = cols.size();
    double A[kCols][kCols + 1] = {};  // normal equations, augmented
    for (const Point* p : pts) {
      const loom::plan::CostModel::Terms& t = p->terms;
      const double w = 1.0 / p->us, row[kCols] = {1.0, t.rounds, t.wakes, t.transfer * 1e6};
      const double y = p->us - t.fixed * 1e6 - minRoundUs * t.rounds;
      for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < n; ++j) A[i][j] += w * w * row[cols[i]] * row[cols[j]];
        A[i][n] += w * w * row[cols[i]] * y;
      }
    }
    bool singular = false;
    for (size_t c = 0; c < n && !singular; ++c) {  // Gauss-Jordan, partial pivoting
      size_t piv = c;
      for (size_t r = c + 1; r < n; ++r)
        if (std::abs(A[r][c]) > std::abs(A[piv][c])) piv = r;
      std::swap(A[c], A[piv]);
      if (std::abs(A[c][c]) < 1e-30) singular = true;
      for (size_t r = 0; r < n && !singular; ++r) {
        if (r == c) continue;
        const double f = A[r][c] / A[c][c];
        for (size_t k = c; k <= n; ++k) A[r][k] -= f * A[c][k];
      }
    }
    if (singular) continue;
    double x[kCols] = {0, 0, 0, 0};
    for (size_t i = 0; i < n; ++i) x[cols[i]] = A[i][n] / A[i][i];
    if (x[0] < 0 || x[1] < 0 || x[2] < 0 || x[3] <= 0) continue;
    loom::plan::AlgoFit f;
    f.baseUs = x[0];
    f.roundUs = x[1] + minRoundUs;
    f.wakeUs = x[2];
    f.bwEff = std::clamp(1.0 / x[3], 0.05, 20.0);
    double err = 0;
    for (const Point* p : pts) {
      const double e = predictUs(f, p->terms) / p->us - 1;
      err += e * e;
    }
    if (bestErr < 0 || err < bestErr) bestErr = err, best = f;
  }
  return best;
}

}  // namespace

loom::Status calibrate(loom::plan::CostParams* out, bool verbose) {
  using loom::plan::CostParams;
  // The local reduction rate, on this core.
  const size_t big = 4 << 20;
  std::vector<float> a(big / 4, 1.0f), b(big / 4, 2.0f);
  auto t0 = Clock::now();
  for (int i = 0; i < 20; ++i)
    loom::kernels::reduce(a.data(), a.data(), b.data(), a.size(), loom::DataType::kFloat32,
                          loom::RedOp::kSum);
  out->reduceGBps = 20.0 * big / std::chrono::duration<double>(Clock::now() - t0).count() / 1e9;
  out->cores = static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN));
  out->fits.clear();
  // Every algorithm forced, 2, 4 and 8 ranks, over shm and tcp.
  MeasureSpec m;
  for (const loom::algo::AlgoInfo* ai : loom::algo::algosFor(loom::sched::CollType::kAllReduce))
    m.algos.push_back(ai->name);
  // 32 KiB: below shm's single-copy threshold (its copy ring); 16 MiB: above it.
  m.sizes = {8, 2048, 32 << 10, 1 << 20, 16 << 20};
  out->shmCmaBytes = static_cast<double>(loom::params::shmCmaThreshold());
  const bool cma = loom::params::shmCma() != "off";
  m.rounds = 5;
  std::vector<Point> pts;
  for (const char* tr : {"shm", "tcp"}) {
    for (int ranks : {2, 4, 8}) {
      m.transport = tr;
      m.ranks = ranks;
      Measured r;
      LOOM_CHECK(measureAllReduce(m, &r));
      for (size_t i = 0; i < m.algos.size(); ++i)
        for (size_t s = 0; s < m.sizes.size(); ++s)
          pts.push_back({m.algos[i], tr, ranks, m.sizes[s], r.medianUs(i, s), {}});
      if (ranks != 2) continue;
      // Alpha and beta from two ranks' recursive doubling: one exchange of the whole vector and
      // one reduction of it per call. shm: the copy ring's rate at 32 KiB, single copy's at 16 MiB.
      const size_t rd = std::find(m.algos.begin(), m.algos.end(), "rd") - m.algos.begin();
      const double small = r.medianUs(rd, 0) * 1e-6;
      auto rate = [&](size_t s) {
        const double n = static_cast<double>(m.sizes[s]), t = r.medianUs(rd, s) * 1e-6;
        return std::min(100.0, n / std::max(1e-9, t - small - n / (out->reduceGBps * 1e9)) / 1e9);
      };
      const size_t last = m.sizes.size() - 1;
      if (std::string(tr) == "shm") {
        out->shmAlphaUs = small * 1e6;
        out->shmGBps = cma ? rate(2) : rate(last);
        out->shmCmaGBps = cma ? rate(last) : 0;
      } else {
        out->tcpAlphaUs = small * 1e6;
        out->tcpGBps = rate(last);
      }
    }
  }
  out->hostMemGBps = out->shmGBps * std::max(1.0, out->cores);
  // Fit every (algorithm, transport) twice: the second time the forced planners pick their
  // variants (chunk, order) with the first fit in place, as the library will.
  for (int pass = 0; pass < 2; ++pass) {
    for (Point& p : pts) LOOM_CHECK(termsOf(*out, &p));
    std::map<std::string, loom::plan::AlgoFit> fits;
    for (const std::string& algo : m.algos)
      for (const char* tr : {"shm", "tcp"}) {
        std::vector<const Point*> sel;
        for (const Point& p : pts)
          if (p.algo == algo && p.transport == tr) sel.push_back(&p);
        const double alphaUs = std::string(tr) == "shm" ? out->shmAlphaUs : out->tcpAlphaUs;
        fits[algo + "." + tr] = fitPoints(sel, -0.9 * alphaUs);
      }
    out->fits = fits;
  }
  if (verbose) {
    int within10 = 0, within25 = 0;
    std::cerr << "# calibration: measured (median of " << m.rounds
              << " interleaved rounds) against the fitted model, us\n";
    for (Point& p : pts) {
      LOOM_CHECK(termsOf(*out, &p));
      const double pred = predictUs(out->fits[p.algo + "." + p.transport], p.terms);
      std::cerr << p.transport << " np" << p.ranks << " " << p.bytes << " B " << p.algo
                << ": measured " << p.us << " predicted " << pred << "\n";
      within10 += std::abs(pred / p.us - 1) <= 0.1;
      within25 += std::abs(pred / p.us - 1) <= 0.25;
    }
    std::cerr << "# predicted within 10% of measured at " << within10 << " of " << pts.size()
              << " points, within 25% at " << within25 << "\n";
  }
  return Status();
}

}  // namespace loomplan
