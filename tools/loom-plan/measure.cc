// loom-plan --measure: interleaved all-reduce measurement through loom's C API, which the
// calibration (calibrate.cc) and perf/planner/planner_vs_forced.py build on.
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "calibrate.h"
#include "core/identity.h"
#include "core/params.h"
#include "loom/loom.h"
#include "plan/planner.h"

namespace loomplan {

// LOOM_SHM_DIRECT_BYTES where the library has it (0 otherwise).
uint64_t directBytes() {
  for (const loom::params::ParamInfo& p : loom::params::all())
    if (std::string(p.env) == "LOOM_SHM_DIRECT_BYTES")
      return std::strtoull(p.value.c_str(), nullptr, 0);
  return 0;
}

loom::sched::CollArgs allReduceArgs(uint64_t bytes) {
  loom::sched::CollArgs a;
  a.coll = loom::sched::CollType::kAllReduce;
  a.dtype = loom::DataType::kFloat32;
  a.count = std::max<uint64_t>(1, bytes / 4);
  return a;
}

namespace {

using Clock = std::chrono::steady_clock;
using loom::Status;

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
  // One untimed all-reduce of the largest size on every communicator first, so each one's shm
  // rings (or tcp buffers) are touched before timing. (Before the shm transport rewound its rings,
  // a communicator that took the direct path for the small sizes faulted in new ring pages all
  // through the larger sizes; now a medium message reuses a ring's first pages.)
  for (size_t a = 0; a < na; ++a)
    if (loomAllReduce(in.data(), out.data(), std::max<uint64_t>(1, most / 4), loomFloat32, loomSum,
                      comms[a], nullptr) != loomSuccess)
      return 3;
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
    ctx.hostCpus = loom::usableCpus();  // the ranks are forked on this machine
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
                bool forcedOnly, const std::vector<std::string>& only) {
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
  // A one-host communicator has the direct path for small all-reduces (transports/shm/direct.h).
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
  if (!only.empty()) {
    for (const std::string& a : only)
      if (std::find(m.algos.begin(), m.algos.end(), a) == m.algos.end()) {
        std::cerr << "loom-plan: --algos: '" << a << "' is not a candidate here (algorithms, "
                  << (m.directBytes > 0 ? "direct, " : "") << "planner)\n";
        return 1;
      }
    m.algos = only;
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

}  // namespace loomplan
