// The perf drivers run a tiny sweep (8 B .. 64 KiB, 2 ranks) and print an nccl-tests table that
// parses, with #wrong = 0 on every row, a closing "Avg bus bandwidth" line and exit status 0.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct CmdResult {
  int status = -1;
  std::string out;
};

CmdResult runCommand(const std::string& cmd) {
  CmdResult r;
  std::FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
  return r;
}

struct Row {
  long size = 0;
  long count = 0;
  std::string type, redop;
  int root = 0;
  std::vector<std::string> oop, ip;  // time algbw busbw #wrong
};

// Parses the table rows (non-# lines with 13 fields).
bool parseTable(const std::string& out, std::vector<Row>* rows, double* avgBusbw) {
  std::istringstream in(out);
  std::string line;
  bool sawAvg = false;
  while (std::getline(in, line)) {
    if (line.rfind("# Avg bus bandwidth", 0) == 0) {
      *avgBusbw = std::atof(line.substr(line.find(':') + 1).c_str());
      sawAvg = true;
    }
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    std::vector<std::string> t;
    std::string tok;
    while (f >> tok) t.push_back(tok);
    if (t.size() != 13) continue;  // not a table row (e.g. a launcher note)
    Row r;
    r.size = std::atol(t[0].c_str());
    r.count = std::atol(t[1].c_str());
    r.type = t[2];
    r.redop = t[3];
    r.root = std::atoi(t[4].c_str());
    r.oop.assign(t.begin() + 5, t.begin() + 9);
    r.ip.assign(t.begin() + 9, t.end());
    rows->push_back(r);
  }
  return sawAvg;
}

std::string driver(const std::string& coll) {
  return std::string(LOOM_PERF_BIN_DIR) + "/" + coll + "_perf";
}

const char* const kSweep = " -b 8 -e 64K -f 2 -n 3 -w 1 -c 1";

void expectCleanTable(const CmdResult& run, const std::string& coll, bool inPlace) {
  ASSERT_EQ(run.status, 0) << run.out;
  std::vector<Row> rows;
  double avg = -1;
  ASSERT_TRUE(parseTable(run.out, &rows, &avg)) << "no 'Avg bus bandwidth' line:\n" << run.out;
  ASSERT_GE(rows.size(), 10u) << run.out;
  EXPECT_GT(avg, 0.0);
  EXPECT_EQ(rows.back().size, 65536) << run.out;
  for (const Row& r : rows) {
    EXPECT_EQ(r.type, "float");
    EXPECT_EQ(r.oop[3], "0") << coll << " out-of-place size " << r.size << "\n" << run.out;
    EXPECT_GT(std::atof(r.oop[0].c_str()), 0.0) << "time of size " << r.size;
    if (inPlace) {
      EXPECT_EQ(r.ip[3], "0") << coll << " in-place size " << r.size << "\n" << run.out;
    } else {
      EXPECT_EQ(r.ip[0], "N/A");
    }
  }
  EXPECT_NE(run.out.find("# Out of bounds values : 0 OK"), std::string::npos);
}

void expectCleanSendrecv(const CmdResult& run) {
  ASSERT_EQ(run.status, 0) << run.out;
  std::vector<Row> rows;
  double avg = -1;
  ASSERT_TRUE(parseTable(run.out, &rows, &avg)) << run.out;
  ASSERT_EQ(rows.size(), 4u) << run.out;  // 1000, 4000, 16000, 64000
  for (const Row& r : rows) EXPECT_EQ(r.oop[3], "0") << "size " << r.size << "\n" << run.out;
}

class DriverTest : public ::testing::TestWithParam<const char*> {};

TEST_P(DriverTest, TinySweepTwoRanksHasNoWrongElements) {
  std::string coll = GetParam();
  CmdResult run = runCommand(driver(coll) + " --ranks 2 --timeout 120" + kSweep);
  bool inPlace = coll != "alltoall" && coll != "sendrecv";
  expectCleanTable(run, coll, inPlace);
}

INSTANTIATE_TEST_SUITE_P(AllDrivers, DriverTest,
                         ::testing::Values("all_reduce", "all_gather", "reduce_scatter",
                                           "broadcast", "reduce", "alltoall", "sendrecv"));

// The first number after "key": in a JSON line (the out-of-place placement comes first); -1 when
// the key is missing.
double jsonNumber(const std::string& line, const std::string& key) {
  size_t at = line.find("\"" + key + "\":");
  return at == std::string::npos ? -1.0 : std::atof(line.c_str() + at + key.size() + 3);
}

TEST(PerfDriver, JsonLinesMatchTheTable) {
  std::string json = ::testing::TempDir() + "/perf_smoke_" + std::to_string(getpid()) + ".json";
  std::remove(json.c_str());
  CmdResult run =
      runCommand(driver("all_reduce") + " --ranks 2 --timeout 120 -b 1K -e 4K -f 2 -J " + json);
  ASSERT_EQ(run.status, 0) << run.out;
  std::ifstream in(json);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    EXPECT_NE(line.find("\"coll\":\"all_reduce\""), std::string::npos) << line;
    EXPECT_NE(line.find("\"nranks\":2"), std::string::npos) << line;
    EXPECT_NE(line.find("\"wrong\":0"), std::string::npos) << line;
    // cpu_us: both ranks' CPU time per iteration. It is spent (above zero), and no more than the
    // machine's cores can give in the iteration's wall time (slack: two clocks, rounding).
    double timeUs = jsonNumber(line, "time_us"), cpuUs = jsonNumber(line, "cpu_us");
    EXPECT_GT(cpuUs, 0.0) << line;
    EXPECT_LE(cpuUs, timeUs * static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN)) * 1.1 + 20.0)
        << line;
    // steal_pct: the share of this host's CPU time its hypervisor stole in the timed loop, a
    // percentage (Linux has /proc/stat: never unknown here).
    double steal = jsonNumber(line, "steal_pct");
    EXPECT_GE(steal, 0.0) << line;
    EXPECT_LE(steal, 100.0) << line;
  }
  EXPECT_EQ(lines, 3);  // 1K, 2K, 4K
  std::remove(json.c_str());
}

// --msg-bytes splits each sendrecv into messages of at most that size, in one group; a size that
// is not a multiple of it (the last message shorter) still arrives exactly, on an odd rank count.
TEST(PerfDriver, SendrecvInMessagesOfMsgBytesIsExact) {
  CmdResult run = runCommand(driver("sendrecv") +
                             " --ranks 3 --timeout 120 -b 1000 -e 64K -f 4 -n 2 --msg-bytes 4K");
  expectCleanSendrecv(run);
}

// --lockstep 1: each message in its own group, done before the next; the same bytes arrive.
TEST(PerfDriver, SendrecvInLockStepMessagesIsExact) {
  CmdResult run =
      runCommand(driver("sendrecv") + " --ranks 3 --timeout 120 -b 1000 -e 64K -f 4 -n 2" +
                 " --msg-bytes 4K --lockstep 1");
  expectCleanSendrecv(run);
}

TEST(PerfDriver, LockstepNeedsMsgBytesAndZeroOrOne) {
  CmdResult run = runCommand(driver("sendrecv") + " --ranks 2 --lockstep 1");
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("--lockstep 1 needs --msg-bytes"), std::string::npos) << run.out;
  run = runCommand(driver("sendrecv") + " --ranks 2 --msg-bytes 4K --lockstep yes");
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("bad value 'yes' for flag -lockstep"), std::string::npos) << run.out;
}

// --pairwise 1: each rank exchanges with rank ^ 1; the partner's bytes arrive (the check names
// rank ^ 1 as the source), in one message and in several.
TEST(PerfDriver, SendrecvPairwiseExchangesWithRankXorOne) {
  expectCleanSendrecv(runCommand(driver("sendrecv") +
                                 " --ranks 4 --timeout 120 -b 1000 -e 64K -f 4 -n 2 --pairwise 1"));
  expectCleanSendrecv(runCommand(driver("sendrecv") +
                                 " --ranks 4 --timeout 120 -b 1000 -e 64K -f 4 -n 2" +
                                 " --pairwise 1 --msg-bytes 4K"));
}

TEST(PerfDriver, PairwiseNeedsEvenRanksSendrecvAndZeroOrOne) {
  CmdResult run = runCommand(driver("sendrecv") + " --ranks 3 --timeout 60 --pairwise 1");
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("--pairwise 1 needs an even rank count (got 3 ranks)"), std::string::npos)
      << run.out;
  run = runCommand(driver("all_reduce") + " --ranks 2 --pairwise 1");
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("--pairwise applies to sendrecv only"), std::string::npos) << run.out;
  run = runCommand(driver("sendrecv") + " --ranks 2 --pairwise yes");
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("bad value 'yes' for flag -pairwise"), std::string::npos) << run.out;
}

// --ip-first 1 times the in-place column before the out-of-place one: both still run, are
// checked (the driver exits non-zero on any wrong element) and are reported in their columns.
TEST(PerfDriver, IpFirstTimesBothColumnsInPlaceFirst) {
  CmdResult run = runCommand(driver("all_reduce") +
                             " --ranks 2 --timeout 120 -b 1K -e 4K -f 4 -n 2 --ip-first 1");
  EXPECT_EQ(run.status, 0) << run.out;
  int rows = 0;
  std::istringstream in(run.out);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    std::vector<std::string> cols;
    for (std::string c; f >> c;) cols.push_back(c);
    if (cols.size() < 13 || (cols[0] != "1024" && cols[0] != "4096")) continue;
    ++rows;
    EXPECT_EQ(cols[8], "0") << line;   // out of place #wrong
    EXPECT_EQ(cols[12], "0") << line;  // in place #wrong
  }
  EXPECT_EQ(rows, 2) << run.out;
  run = runCommand(driver("all_reduce") + " --ranks 2 --ip-first 2");
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("bad value '2' for flag -ip-first"), std::string::npos) << run.out;
}

// The CPUs each rank reports in the "Using devices" lines ("..., CPUs 0-1"), by rank.
std::vector<std::string> rankCpus(const std::string& out) {
  std::vector<std::string> cpus;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    size_t at = line.find("host memory, CPUs ");
    if (line.rfind("#  Rank", 0) == 0 && at != std::string::npos)
      cpus.push_back(line.substr(at + 18));
  }
  return cpus;
}

int usableCpus() {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

// --bind core pins forked rank r to the r-th usable CPU (round robin) and says so; each rank's
// own affinity, as it reports it, is that one CPU. --bind none leaves every rank the launcher's
// CPUs; auto binds only when the ranks fit the CPUs. A bad value is refused.
TEST(PerfDriver, BindPinsEachForkedRankToOneCpu) {
  const std::string tiny = " --timeout 120 -b 1K -e 1K -n 2 -w 1";
  CmdResult run = runCommand(driver("all_reduce") + " --ranks 2 --bind core" + tiny);
  ASSERT_EQ(run.status, 0) << run.out;
  size_t at = run.out.find("# --bind core: rank r on CPU ");
  ASSERT_NE(at, std::string::npos) << run.out;
  std::istringstream said(run.out.substr(at + 29));
  int c0 = -1, c1 = -1;
  said >> c0 >> c1;
  std::vector<std::string> cpus = rankCpus(run.out);
  ASSERT_EQ(cpus.size(), 2u) << run.out;
  EXPECT_EQ(cpus[0], std::to_string(c0)) << run.out;
  EXPECT_EQ(cpus[1], std::to_string(c1)) << run.out;
  if (usableCpus() >= 2) {
    EXPECT_NE(c0, c1) << run.out;
    // Pinned to a core each, they do not share one: no oversubscription warning from loom.
    EXPECT_EQ(run.out.find("ranks share this host's"), std::string::npos) << run.out;
  }

  run = runCommand(driver("all_reduce") + " --ranks 2 --bind none" + tiny);
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(run.out.find("# --bind"), std::string::npos) << run.out;
  cpus = rankCpus(run.out);
  ASSERT_EQ(cpus.size(), 2u) << run.out;
  EXPECT_EQ(cpus[0], cpus[1]) << run.out;
  if (usableCpus() >= 2) {
    EXPECT_NE(cpus[0].find_first_of(",-"), std::string::npos) << run.out;
  }

  const int over = usableCpus() + 1;
  if (over <= 17) {  // on a small machine only: not hundreds of ranks
    run = runCommand(driver("all_reduce") + " --ranks " + std::to_string(over) + tiny);
    ASSERT_EQ(run.status, 0) << run.out;
    EXPECT_EQ(run.out.find("# --bind"), std::string::npos) << "more ranks than CPUs\n" << run.out;
  }
  run = runCommand(driver("all_reduce") + " --ranks 2 --bind socket");
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("bad value 'socket' for flag -bind"), std::string::npos) << run.out;
}

TEST(PerfDriver, MsgBytesIsRefusedOutsideSendrecv) {
  CmdResult run = runCommand(driver("all_reduce") + " --ranks 2 --msg-bytes 4K");
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("--msg-bytes applies to sendrecv"), std::string::npos) << run.out;
  run = runCommand(driver("sendrecv") + " --ranks 2 --msg-bytes 0");
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("bad value '0' for flag -msg-bytes"), std::string::npos) << run.out;
}

TEST(PerfDriver, RejectsUnknownFlagsWithStatus2) {
  CmdResult run = runCommand(driver("all_reduce") + " -Q 3");
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("unknown flag -Q"), std::string::npos) << run.out;
}

TEST(PerfDriver, AllTypesAndOpsCheckExactly) {
  CmdResult run = runCommand(driver("all_reduce") +
                             " --ranks 3 --timeout 120 -b 64 -e 4K -f 4 -n 2 -d all -o all");
  ASSERT_EQ(run.status, 0) << run.out;
  std::vector<Row> rows;
  double avg = 0;
  ASSERT_TRUE(parseTable(run.out, &rows, &avg));
  EXPECT_EQ(rows.size(), 10u * 5u * 4u) << run.out;  // types x ops x sizes (64, 256, 1K, 4K)
  for (const Row& r : rows) {
    EXPECT_EQ(r.oop[3], "0") << r.type << " " << r.redop << " " << r.size;
    EXPECT_EQ(r.ip[3], "0") << r.type << " " << r.redop << " " << r.size;
  }
}

TEST(PerfDriver, GlooBaselineBackends) {
#ifdef LOOM_PERF_WITH_GLOO
  for (const char* backend : {"gloo_ring", "gloo_hd"}) {
    CmdResult run =
        runCommand(driver("all_reduce") + " --ranks 2 --timeout 120 --backend " + backend + kSweep);
    ASSERT_NE(run.out.find(std::string("backend: ") + backend), std::string::npos) << run.out;
    expectCleanTable(run, "all_reduce", true);
  }
#else
  GTEST_SKIP() << "Gloo (libgloo-dev) not found at configure time";
#endif
}

#ifdef LOOM_PERF_WITH_MPI
std::string mpirun() {
  std::string exe = LOOM_MPIEXEC;
  if (exe.empty() || access(exe.c_str(), X_OK) != 0) return "";
  return exe + " -np 2 --allow-run-as-root --oversubscribe ";
}

TEST(PerfDriverMpi, AllReduceUnderMpirun) {
  std::string launcher = mpirun();
  if (launcher.empty()) GTEST_SKIP() << "mpirun not found (" << LOOM_MPIEXEC << ")";
  CmdResult run = runCommand(launcher + driver("all_reduce") + kSweep);
  ASSERT_NE(run.out.find("launcher: mpi"), std::string::npos) << run.out;
  expectCleanTable(run, "all_reduce", true);
}

TEST(PerfDriverMpi, MpiBaselineBackend) {
  std::string launcher = mpirun();
  if (launcher.empty()) GTEST_SKIP() << "mpirun not found (" << LOOM_MPIEXEC << ")";
  CmdResult run = runCommand(launcher + driver("all_reduce") + " --backend mpi" + kSweep);
  ASSERT_NE(run.out.find("backend: mpi"), std::string::npos) << run.out;
  expectCleanTable(run, "all_reduce", true);
}
#else
TEST(PerfDriverMpi, AllReduceUnderMpirun) {
  GTEST_SKIP() << "built without MPI (LOOM_WITH_MPI=OFF)";
}
#endif

}  // namespace
