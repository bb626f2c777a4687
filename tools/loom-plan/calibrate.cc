// Interleaved all-reduce measurement through loom's C API, and the calibration built on it.
#include "calibrate.h"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

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
// nothing forced for "planner" and "model" (the library as it is; "model" reads the parameters
// without their tuning table).
void forceAlgo(const std::string& algo, const MeasureSpec& m) {
  if (algo == "planner" || algo == "model")
    unsetenv("LOOM_ALGO");
  else
    setenv("LOOM_ALGO", ("allreduce:" + algo).c_str(), 1);
  unsetenv("LOOM_TUNE");
  const std::string& file = algo == "model" ? m.modelFile : m.paramsFile;
  if (!file.empty()) setenv("LOOM_PLAN_PARAMS", ("@" + file).c_str(), 1);
  loom::params::resetCacheForTesting();
}

loom::sched::CollArgs allReduceArgs(uint64_t bytes) {
  loom::sched::CollArgs a;
  a.coll = loom::sched::CollType::kAllReduce;
  a.dtype = loom::DataType::kFloat32;
  a.count = std::max<uint64_t>(1, bytes / 4);
  return a;
}

// Whether candidate `a` is timed at size `s` (the direct path only up to its slot size).
bool timed(const MeasureSpec& m, size_t a, size_t s) {
  return m.algos[a] != "direct" || m.sizes[s] <= m.directBytes;
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
    forceAlgo(m.algos[a], m);
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
        if (!timed(m, a, s)) continue;
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
    if (a != "planner" && a != "model" && a != "direct" &&
        !loom::algo::findAlgo(loom::sched::CollType::kAllReduce, a))
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
      for (int r = 0; r < m.rounds && timed(m, a, s); ++r) {
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
  out->choice.clear();
  out->source.clear();
  out->modelChoice.clear();
  for (const char* who : {"planner", "model"}) {
    forceAlgo(who, m);
    loom::plan::PlannerContext ctx;
    ctx.nranks = m.ranks;
    for (int r = 0; r < m.ranks; ++r) ctx.hostOf.push_back(m.transport == "tcp" ? r : 0);
    ctx.directBytes = m.transport == "shm" ? directBytes() : 0;
    loom::plan::Planner planner(ctx);
    LOOM_CHECK(planner.status());
    for (uint64_t b : m.sizes) {
      const loom::plan::Decision& d = planner.choose(allReduceArgs(b));
      (std::string(who) == "model" ? out->modelChoice : out->choice).push_back(d.describe());
      if (std::string(who) == "planner") out->source.push_back(d.source);
    }
  }
  return Status();
}

int measureMain(const std::string& transport, int ranks, const std::string& minSize,
                const std::string& maxSize, int rounds, const std::string& paramsFile,
                bool forcedOnly) {
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
  // A one-host communicator has the direct path for small all-reduces (api/shm_direct.h).
  m.directBytes = transport == "shm" ? directBytes() : 0;
  if (m.directBytes > 0) m.algos.push_back("direct");
  if (!forcedOnly) m.algos.push_back("planner");
  // "model": the same parameters without the tuning table, in a file of its own.
  loom::plan::CostParams params;
  if (!forcedOnly && !paramsFile.empty()) {
    std::ifstream in(paramsFile);
    std::stringstream ss;
    ss << in.rdbuf();
    if (Status s = loom::plan::CostParams::parse(ss.str(), &params); !in || !s.ok()) {
      std::cerr << "loom-plan: cannot read parameters from " << paramsFile << "\n";
      return 1;
    }
    if (!params.tuned.empty()) {
      params.tuned.clear();
      m.modelFile = "/tmp/loom-plan-model-" + std::to_string(getpid()) + ".txt";
      std::ofstream(m.modelFile) << params.toString() << "\n";
      m.algos.push_back("model");
    }
  }
  Measured res;
  Status st = measureAllReduce(m, &res);
  if (!m.modelFile.empty()) std::remove(m.modelFile.c_str());
  if (!st.ok()) {
    std::cerr << "loom-plan: " << st.toString() << "\n";
    return 1;
  }
  for (size_t s = 0; s < m.sizes.size(); ++s) {
    std::cout << "{\"transport\":\"" << transport << "\",\"ranks\":" << m.ranks
              << ",\"size\":" << m.sizes[s] << ",\"choice\":\"" << res.choice[s]
              << "\",\"source\":\"" << res.source[s] << "\",\"model_choice\":\""
              << res.modelChoice[s] << "\"";
    for (size_t a = 0; a < m.algos.size(); ++a) {
      if (res.us[a][s].empty()) continue;
      std::cout << ",\"" << m.algos[a] << "\":{\"median_us\":" << res.medianUs(a, s)
                << ",\"min_us\":" << res.minUs(a, s) << ",\"rounds_us\":[";
      for (size_t r = 0; r < res.us[a][s].size(); ++r)
        std::cout << (r ? "," : "") << res.us[a][s][r];
      std::cout << "]}";
    }
    std::cout << "}" << std::endl;
  }
  return 0;
}

namespace {

using loom::plan::AlgoFit;
using loom::plan::CostParams;
using Terms = loom::plan::CostModel::Terms;

// One calibration point: an algorithm (or "direct") forced at one (transport, ranks, size), its
// median time and the model's terms for it.
struct Point {
  std::string algo, transport;
  int ranks;
  uint64_t bytes;
  double us;
  Terms terms;
};

loom::plan::PlannerContext plannerFor(const CostParams& params, int ranks,
                                      const std::string& transport, const std::string& algo) {
  loom::plan::PlannerContext ctx;
  ctx.nranks = ranks;
  for (int r = 0; r < ranks; ++r) ctx.hostOf.push_back(transport == "tcp" ? r : 0);
  ctx.params = params;
  ctx.params.tuned.clear();  // the model's own terms
  ctx.readEnv = false;
  ctx.chunkBytes = static_cast<uint64_t>(loom::params::chunkBytes());
  if (!algo.empty() && algo != "direct") ctx.algo = "allreduce:" + algo;
  return ctx;
}

// The model's terms for a point: the variant (chunk, order) its forced planner picks under
// `params`; the direct path's own terms for "direct".
Status termsOf(const CostParams& params, Point* pt) {
  loom::plan::Planner pl(plannerFor(params, pt->ranks, pt->transport, pt->algo));
  LOOM_CHECK(pl.status());
  if (pt->algo == "direct") {
    pt->terms = pl.model().directTerms(pt->bytes);
    return Status();
  }
  const loom::sched::CollArgs args = allReduceArgs(pt->bytes);
  const loom::plan::Decision& d = pl.choose(args);
  if (!d.algo) return loom::internalError("calibrate: no decision for ", pt->algo);
  std::vector<loom::plan::Round> rounds;
  LOOM_CHECK(pl.rounds(args, d, &rounds));
  pt->terms = pl.model().terms(rounds, loom::plan::Planner::pipelined(pt->algo));
  return Status();
}

// Predicted us of a point under a fit, as CostModel::price adds it up.
double predictUs(const AlgoFit& f, const Terms& t) {
  return f.baseUs + t.fixed * 1e6 + f.roundUs * t.rounds + f.wakeUs * t.wakes +
         t.transfer * 1e6 / f.bwEff;
}

// Weighted least squares: x minimising sum_i w_i^2 (rows_i . x - y_i)^2 over the columns `cols`
// (others 0); false when singular.
bool leastSquares(const std::vector<std::vector<double>>& rows, const std::vector<double>& y,
                  const std::vector<double>& w, const std::vector<int>& cols,
                  std::vector<double>* x) {
  const size_t n = cols.size();
  std::vector<std::vector<double>> A(n, std::vector<double>(n + 1, 0.0));  // normal equations
  for (size_t k = 0; k < rows.size(); ++k)
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) A[i][j] += w[k] * w[k] * rows[k][cols[i]] * rows[k][cols[j]];
      A[i][n] += w[k] * w[k] * rows[k][cols[i]] * y[k];
    }
  for (size_t c = 0; c < n; ++c) {  // Gauss-Jordan, partial pivoting
    size_t piv = c;
    for (size_t r = c + 1; r < n; ++r)
      if (std::abs(A[r][c]) > std::abs(A[piv][c])) piv = r;
    std::swap(A[c], A[piv]);
    if (std::abs(A[c][c]) < 1e-30) return false;
    for (size_t r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = A[r][c] / A[c][c];
      for (size_t k = c; k <= n; ++k) A[r][k] -= f * A[c][k];
    }
  }
  x->assign(rows.empty() ? 0 : rows[0].size(), 0.0);
  for (size_t i = 0; i < n; ++i) (*x)[cols[i]] = A[i][n] / A[i][i];
  return true;
}

// Least squares for y = base + roundUs R + wakeUs W + invEff T (R, W, T: the model's terms),
// weighted by 1/measured (relative error), with base, wakeUs >= 0, roundUs >= minRoundUs and
// invEff > 0: the best feasible solution over the subsets of {base, roundUs - minRoundUs, wakeUs}
// (invEff always in). minRoundUs < 0 lets the fit take back part of alpha, which two ranks'
// recursive doubling measured together with the per-call cost.
AlgoFit fitPoints(const std::vector<const Point*>& pts, double minRoundUs) {
  std::vector<std::vector<double>> rows;
  std::vector<double> y, w;
  for (const Point* p : pts) {
    const Terms& t = p->terms;
    rows.push_back({1.0, t.rounds, t.wakes, t.transfer * 1e6});
    y.push_back(p->us - t.fixed * 1e6 - minRoundUs * t.rounds);
    w.push_back(1.0 / p->us);
  }
  AlgoFit best;
  double bestErr = -1;
  for (int mask = 0; mask < 8; ++mask) {
    std::vector<int> cols = {3};
    for (int c = 0; c < 3; ++c)
      if (mask & (1 << c)) cols.push_back(c);
    std::vector<double> x;
    if (!leastSquares(rows, y, w, cols, &x)) continue;
    if (x[0] < 0 || x[1] < 0 || x[2] < 0 || x[3] <= 0) continue;
    AlgoFit f;
    f.baseUs = x[0];
    f.roundUs = x[1] + minRoundUs;
    f.wakeUs = x[2];
    f.bwEff = std::clamp(1.0 / x[3], 0.05, 20.0);
    double err = 0;
    for (const Point* p : pts) err += std::pow(predictUs(f, p->terms) / p->us - 1, 2);
    if (bestErr < 0 || err < bestErr) bestErr = err, best = f;
  }
  return best;
}

// The per-message terms of one transport from two ranks' recursive doubling (one exchange of
// the whole vector and one reduction of it per call): t(n) = alpha + [n > eager] bigAlpha +
// n / rate(n) + n / reduce, rate(n) = cacheRate for n <= cacheBytes, else rate. The thresholds
// come from a grid (with "none" in it: twoLevel false keeps only that point, the one-level model);
// the rest from weighted least squares.
struct LinkFit {
  double alphaUs = 0, bigAlphaUs = 0, eagerBytes = 1024, cacheBytes = 262144, cacheGBps = 0;
  double gbps = 1;
};
LinkFit fitLink(const std::vector<std::pair<uint64_t, double>>& rd, double reduceGBps,
                bool twoLevel) {
  constexpr double kNone = 1e300;
  const std::vector<double> eagers =
      twoLevel ? std::vector<double>{256, 1024, 4096, 16384, kNone} : std::vector<double>{kNone};
  const std::vector<double> caches =
      twoLevel ? std::vector<double>{0, 32768, 131072, 524288, 2097152} : std::vector<double>{0};
  LinkFit best;
  double bestErr = -1;
  for (double e : eagers)
    for (double c : caches) {
      std::vector<std::vector<double>> rows;
      std::vector<double> y, w;
      for (auto [n, us] : rd) {
        const double b = static_cast<double>(n);
        rows.push_back({1.0, b > e ? 1.0 : 0.0, b <= c ? b : 0.0, b > c ? b : 0.0});
        y.push_back(us - b / (reduceGBps * 1e3));
        w.push_back(1.0 / us);
      }
      std::vector<int> cols = {0, 3};
      if (e < kNone) cols.push_back(1);
      if (c > 0) cols.push_back(2);
      std::vector<double> x;
      if (!leastSquares(rows, y, w, cols, &x)) continue;
      if (x[0] <= 0 || x[1] < 0 || x[3] <= 0 || (c > 0 && x[2] <= 0)) continue;
      double err = 0;
      for (size_t k = 0; k < rows.size(); ++k) {
        double pred =
            y[k] - (rows[k][0] * x[0] + rows[k][1] * x[1] + rows[k][2] * x[2] + rows[k][3] * x[3]);
        err += std::pow(pred * w[k], 2);
      }
      if (bestErr >= 0 && err >= bestErr) continue;
      bestErr = err;
      best.alphaUs = x[0];
      best.bigAlphaUs = e < kNone ? x[1] : 0;
      best.eagerBytes = e < kNone ? e : 1024;
      best.cacheBytes = c > 0 ? c : 262144;
      best.cacheGBps = c > 0 ? std::min(100.0, 1e-3 / x[2]) : 0;
      best.gbps = std::min(100.0, 1e-3 / x[3]);
    }
  return best;
}

// Link terms of both transports and the fits of every (algorithm, transport) on `pts`.
Status fitModel(std::vector<Point>& pts, bool twoLevel, CostParams* out) {
  const bool cma = loom::params::shmCma() != "off";
  for (const char* tr : {"shm", "tcp"}) {
    std::vector<std::pair<uint64_t, double>> rd;
    double cmaUs = 0;
    uint64_t cmaN = 0;
    for (const Point& p : pts) {
      if (p.algo != "rd" || p.ranks != 2 || p.transport != tr) continue;
      if (std::string(tr) == "shm" && cma && p.bytes >= out->shmCmaBytes) {
        if (p.bytes > cmaN) cmaN = p.bytes, cmaUs = p.us;
        continue;
      }
      rd.push_back({p.bytes, p.us});
    }
    if (rd.size() < 3)
      return loom::invalidArgument("calibrate: needs two-rank rd over ", tr, " at 3 sizes or more");
    const LinkFit f = fitLink(rd, out->reduceGBps, twoLevel);
    if (std::string(tr) == "shm") {
      out->shmAlphaUs = f.alphaUs, out->shmGBps = f.gbps, out->shmBigAlphaUs = f.bigAlphaUs;
      out->shmEagerBytes = f.eagerBytes, out->shmCacheBytes = f.cacheBytes;
      out->shmCacheGBps = f.cacheGBps;
      out->shmCmaGBps = 0;
      if (cmaN > 0) {
        const double t =
            cmaUs * 1e-6 - f.alphaUs * 1e-6 - f.bigAlphaUs * 1e-6 - cmaN / (out->reduceGBps * 1e9);
        out->shmCmaGBps = std::min(100.0, cmaN / std::max(1e-9, t) / 1e9);
      }
    } else {
      out->tcpAlphaUs = f.alphaUs, out->tcpGBps = f.gbps, out->tcpBigAlphaUs = f.bigAlphaUs;
      out->tcpEagerBytes = f.eagerBytes, out->tcpCacheBytes = f.cacheBytes;
      out->tcpCacheGBps = f.cacheGBps;
    }
  }
  out->hostMemGBps = out->shmGBps * std::max(1.0, out->cores);
  // Fit every (algorithm, transport) twice: the second time the forced planners pick their
  // variants (chunk, order) with the first fit in place, as the library will.
  out->fits.clear();
  for (int pass = 0; pass < 2; ++pass) {
    for (Point& p : pts) LOOM_CHECK(termsOf(*out, &p));
    std::map<std::string, std::vector<const Point*>> by;
    for (const Point& p : pts) by[p.algo + "." + p.transport].push_back(&p);
    std::map<std::string, AlgoFit> fits;
    for (const auto& [which, sel] : by) {
      const double alphaUs = sel[0]->transport == "shm" ? out->shmAlphaUs : out->tcpAlphaUs;
      fits[which] = fitPoints(sel, sel[0]->algo == "direct" ? 0.0 : -0.9 * alphaUs);
    }
    out->fits = fits;
  }
  return Status();
}

// The algorithm the cost model alone picks for a point's communicator and size.
std::string modelChoice(const CostParams& params, const Point& p) {
  loom::plan::PlannerContext ctx = plannerFor(params, p.ranks, p.transport, "");
  ctx.directBytes = p.transport == "shm" ? directBytes() : 0;
  loom::plan::Planner pl(ctx);
  const loom::plan::Decision& d = pl.choose(allReduceArgs(p.bytes));
  return d.algo ? d.algo->name : "";
}

// The tuning table: per (transport, ranks, size) the measured fastest algorithm, unless the cost
// model's own choice measured within kTie of it (then the model's, so that the table overrides
// the model only where the measurement clearly disagrees); buckets up to the geometric middle
// between measured sizes (the last up to the largest size measured), equal neighbours merged.
constexpr double kTie = 1.05;
void tuningTable(const std::vector<Point>& pts, CostParams* out) {
  std::map<std::string, std::map<uint64_t, std::map<std::string, double>>> us;
  std::map<std::string, std::map<uint64_t, const Point*>> any;
  for (const Point& p : pts) {
    const std::string which = p.transport + "." + std::to_string(p.ranks);
    us[which][p.bytes][p.algo] = p.us;
    any[which][p.bytes] = &p;
  }
  out->tuned.clear();
  for (const auto& [which, bySize] : us) {
    std::vector<std::pair<uint64_t, std::string>> v;
    for (auto it = bySize.begin(); it != bySize.end(); ++it) {
      const auto& t = it->second;
      auto best = std::min_element(
          t.begin(), t.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
      std::string pick = best->first;
      auto m = t.find(modelChoice(*out, *any[which][it->first]));
      if (m != t.end() && m->second <= kTie * best->second) pick = m->first;
      auto next = std::next(it);
      const uint64_t upTo =
          next == bySize.end()
              ? it->first
              : static_cast<uint64_t>(std::sqrt(double(it->first) * double(next->first)));
      if (!v.empty() && v.back().second == pick)
        v.back().first = upTo;
      else
        v.push_back({upTo, pick});
    }
    for (auto& [upTo, algo] : v) out->tuned[which][upTo] = algo;
  }
}

// A number after "key": in a --measure line (0 when absent).
double jsonNumber(const std::string& line, const std::string& key) {
  const size_t at = line.find("\"" + key + "\":");
  return at == line.npos ? 0 : std::strtod(line.c_str() + at + key.size() + 3, nullptr);
}

// Calibration points from --measure lines: every forced candidate's median.
Status readPoints(const std::vector<std::string>& files, const std::vector<std::string>& algos,
                  std::vector<Point>* pts) {
  for (const std::string& file : files) {
    std::ifstream in(file);
    if (!in) return loom::invalidArgument("calibrate: cannot read --from-json file ", file);
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] != '{') continue;
      const std::string tr = line.find("\"transport\":\"tcp\"") != line.npos ? "tcp" : "shm";
      const int ranks = static_cast<int>(jsonNumber(line, "ranks"));
      const auto bytes = static_cast<uint64_t>(jsonNumber(line, "size"));
      for (const std::string& a : algos) {
        const size_t at = line.find("\"" + a + "\":{\"median_us\":");
        if (at == line.npos) continue;
        const double us = std::strtod(line.c_str() + at + a.size() + 16, nullptr);
        if (us > 0) pts->push_back({a, tr, ranks, bytes, us, {}});
      }
    }
  }
  if (pts->empty()) return loom::invalidArgument("calibrate: no measurement lines in --from-json");
  return Status();
}

// How well `params` predicts `pts`, per transport and over 8 KiB-512 KiB.
void printQuality(const char* name, const std::vector<Point>& pts,
                  const std::vector<double>& pred) {
  for (const char* tr : {"shm", "tcp", "all"})
    for (bool mid : {false, true}) {
      int n = 0, in10 = 0, in25 = 0;
      std::vector<double> err;
      for (size_t i = 0; i < pts.size(); ++i) {
        const Point& p = pts[i];
        if ((std::string(tr) != "all" && p.transport != tr) ||
            (mid && (p.bytes < 8192 || p.bytes > 524288)))
          continue;
        const double e = std::abs(pred[i] / p.us - 1);
        ++n, in10 += e <= 0.1, in25 += e <= 0.25;
        err.push_back(e);
      }
      if (!n) continue;
      std::sort(err.begin(), err.end());
      std::fprintf(
          stderr,
          "# %-9s %-3s %-13s %3d points: within 10%% %3d, within 25%% %3d, median |error| %.1f%%\n",
          name, tr, mid ? "8 KiB-512 KiB" : "all sizes", n, in10, in25, 100 * err[err.size() / 2]);
    }
}

std::vector<double> predictions(const CostParams& params, std::vector<Point>& pts) {
  std::vector<double> pred;
  for (Point& p : pts) {
    if (!termsOf(params, &p).ok()) {
      pred.push_back(0);
      continue;
    }
    auto it = params.fits.find(p.algo + "." + p.transport);
    pred.push_back(predictUs(it == params.fits.end() ? AlgoFit() : it->second, p.terms));
  }
  return pred;
}

}  // namespace

loom::Status calibrate(const std::vector<std::string>& fromJson, CostParams* out, bool verbose) {
  // The local reduction rate, on this core.
  const size_t big = 4 << 20;
  std::vector<float> a(big / 4, 1.0f), b(big / 4, 2.0f);
  out->reduceGBps = 0;
  for (int trial = 0; trial < 5; ++trial) {  // the best of 5: a busy core only slows it down
    auto t0 = Clock::now();
    for (int i = 0; i < 5; ++i)
      loom::kernels::reduce(a.data(), a.data(), b.data(), a.size(), loom::DataType::kFloat32,
                            loom::RedOp::kSum);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    out->reduceGBps = std::max(out->reduceGBps, 5.0 * big / s / 1e9);
  }
  out->cores = static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN));
  out->shmCmaBytes = static_cast<double>(loom::params::shmCmaThreshold());
  std::vector<std::string> algos;
  for (const loom::algo::AlgoInfo* ai : loom::algo::algosFor(loom::sched::CollType::kAllReduce))
    algos.push_back(ai->name);
  algos.push_back("direct");
  std::vector<Point> pts;
  int rounds = 0;
  if (!fromJson.empty()) {
    LOOM_CHECK(readPoints(fromJson, algos, &pts));
  } else {  // every algorithm forced, 2, 4 and 8 ranks, over shm and tcp, 8 B to 16 MiB x4
    MeasureSpec m;
    m.algos = algos;
    for (uint64_t s = 8; s <= (16u << 20); s *= 4) m.sizes.push_back(s);
    m.rounds = rounds = 3;
    for (const char* tr : {"shm", "tcp"})
      for (int ranks : {2, 4, 8}) {
        m.transport = tr;
        m.ranks = ranks;
        m.directBytes = std::string(tr) == "shm" ? directBytes() : 0;
        if (verbose) std::cerr << "# measuring " << tr << " " << ranks << " ranks\n";
        Measured r;
        LOOM_CHECK(measureAllReduce(m, &r));
        for (size_t i = 0; i < m.algos.size(); ++i)
          for (size_t s = 0; s < m.sizes.size(); ++s)
            if (!r.us[i][s].empty())
              pts.push_back({m.algos[i], tr, ranks, m.sizes[s], r.medianUs(i, s), {}});
      }
  }
  // The one-level model (one latency and one rate per transport) for comparison, then the
  // two-level one, which is kept.
  CostParams one = *out;
  LOOM_CHECK(fitModel(pts, false, &one));
  const std::vector<double> predOne = predictions(one, pts);
  LOOM_CHECK(fitModel(pts, true, out));
  const std::vector<double> pred = predictions(*out, pts);
  tuningTable(pts, out);
  if (verbose) {
    std::cerr << "# calibration: measured (median of "
              << (rounds ? std::to_string(rounds) : std::string("the --measure"))
              << " interleaved rounds) against the fitted model (two-level; one-level), us\n";
    for (size_t i = 0; i < pts.size(); ++i) {
      const Point& p = pts[i];
      std::fprintf(stderr, "%s np%d %llu B %s: measured %.2f predicted %.2f (one-level %.2f)\n",
                   p.transport.c_str(), p.ranks, static_cast<unsigned long long>(p.bytes),
                   p.algo.c_str(), p.us, pred[i], predOne[i]);
    }
    printQuality("one-level", pts, predOne);
    printQuality("two-level", pts, pred);
  }
  return Status();
}

}  // namespace loomplan
