// LOOM_STEP_TRACE: every schedule run of every rank leaves one line per step, and the lines agree
// with the schedule (each step once per call, times in order, sends matching receives, the bytes a
// ring all-reduce moves); a path that cannot be opened fails communicator creation clearly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/params.h"
#include "harness/rank_harness.h"

namespace loom::testing {
namespace {

struct Line {
  int rank = -1;
  uint64_t call = 0, step = 0;
  std::string op;
  int peer = -2;
  uint64_t bytes = 0;
  double startUs = -1, endUs = -1;
};

// The lines of one rank's trace file ("" on success, else what is wrong with it).
std::string readTrace(const std::string& path, std::vector<Line>* out) {
  std::ifstream in(path);
  if (!in) return "no trace file " + path;
  std::string text;
  if (!std::getline(in, text) || text.rfind("# loom step trace, rank ", 0) != 0)
    return path + ": no header line";
  while (std::getline(in, text)) {
    std::istringstream ls(text);
    Line l;
    if (!(ls >> l.rank >> l.call >> l.step >> l.op >> l.peer >> l.bytes >> l.startUs >> l.endUs))
      return path + ": bad line '" + text + "'";
    out->push_back(l);
  }
  return "";
}

std::string tempDir() {
  char tmpl[] = "/tmp/loom-step-trace-XXXXXX";
  const char* d = mkdtemp(tmpl);
  return d == nullptr ? "/tmp" : d;
}

TEST(StepTrace, RingAllReduceStepsAreTracedPerRankAndCall) {
  const int p = 3;
  const int calls = 2;
  const uint64_t count = 100000;  // 400000 bytes: a ring of 3 in several chunks
  const std::string dir = tempDir();
  RankOptions opt;
  opt.transport = "shm";
  opt.env = {{"LOOM_STEP_TRACE", dir + "/trace.%r"},
             {"LOOM_ALGO", "allreduce:ring"},
             {"LOOM_CHUNK_BYTES", "65536"}};
  auto results = runRanks(
      p,
      [&](int rank, int, loomComm_t comm) -> std::string {
        std::vector<float> send(count, static_cast<float>(rank + 1)), recv(count, 0.f);
        for (int c = 0; c < calls; ++c) {
          if (loomAllReduce(send.data(), recv.data(), count, loomFloat32, loomSum, comm, nullptr) !=
              loomSuccess)
            return std::string("allreduce: ") + loomGetLastError(comm);  // null stream: blocking
        }
        return recv[count - 1] == 6.f ? "" : "wrong sum";
      },
      opt);
  ASSERT_EQ(failures(results), "");

  const uint64_t bytes = count * sizeof(float);
  // (rank, call) -> sent bytes; (from, to, call) -> bytes sent / received.
  std::map<std::pair<int, uint64_t>, uint64_t> sentBy;
  std::map<std::tuple<int, int, uint64_t>, uint64_t> sent, received;
  for (int r = 0; r < p; ++r) {
    std::vector<Line> lines;
    const std::string path = dir + "/trace." + std::to_string(r);
    ASSERT_EQ(readTrace(path, &lines), "");
    std::map<uint64_t, std::set<uint64_t>> stepsOf;
    for (const Line& l : lines) {
      EXPECT_EQ(l.rank, r) << path;
      EXPECT_LT(l.call, static_cast<uint64_t>(calls)) << path;
      EXPECT_TRUE(stepsOf[l.call].insert(l.step).second)
          << path << ": step " << l.step << " twice in call " << l.call;
      EXPECT_GE(l.startUs, 0.0) << path << " step " << l.step;
      EXPECT_GE(l.endUs, l.startUs) << path << " step " << l.step;
      if (l.bytes > 0) EXPECT_GT(l.endUs, 0.0) << path << " step " << l.step;
      if (l.op == "send") {
        sentBy[{r, l.call}] += l.bytes;
        sent[{r, l.peer, l.call}] += l.bytes;
      } else if (l.op == "recv" || l.op == "recvreduce") {
        received[{l.peer, r, l.call}] += l.bytes;
      } else {
        EXPECT_TRUE(l.op == "copy" || l.op == "reduce") << path << ": op " << l.op;
        EXPECT_EQ(l.peer, -1) << path << ": a local step with a peer";
      }
      if (l.op != "copy" && l.op != "reduce") {
        EXPECT_GE(l.peer, 0) << path;
        EXPECT_LT(l.peer, p) << path;
        EXPECT_NE(l.peer, r) << path;
      }
    }
    ASSERT_EQ(stepsOf.size(), static_cast<size_t>(calls)) << path;
    // Both calls ran the same (cached) schedule: steps 0 .. n-1 each once.
    EXPECT_EQ(stepsOf[0], stepsOf[1]) << path;
    EXPECT_EQ(*stepsOf[0].rbegin() + 1, stepsOf[0].size()) << path;
    unlink(path.c_str());
  }
  rmdir(dir.c_str());
  EXPECT_EQ(sent, received);  // every byte sent was received by the rank it was sent to
  for (uint64_t c = 0; c < calls; ++c) {
    uint64_t total = 0;
    for (int r = 0; r < p; ++r) total += sentBy[{r, c}];
    // A ring all-reduce: 2 (p - 1) steps, in each the ranks together send every segment once.
    EXPECT_EQ(total, 2 * (p - 1) * bytes) << "call " << c;
  }
}

TEST(StepTrace, UnwritablePathIsAnInvalidArgumentNamingIt) {
  setenv("LOOM_STEP_TRACE", "/nonexistent-loom-dir/trace.%r", 1);
  params::resetCacheForTesting();
  loomUniqueId id;
  ASSERT_EQ(loomGetUniqueId(&id), loomSuccess);
  loomComm_t comm = nullptr;
  EXPECT_EQ(loomCommInitRank(&comm, 1, id, 0), loomInvalidArgument);
  const std::string msg = loomGetLastError(nullptr);
  EXPECT_NE(msg.find("LOOM_STEP_TRACE"), std::string::npos) << msg;
  EXPECT_NE(msg.find("/nonexistent-loom-dir/trace.0"), std::string::npos) << msg;
  EXPECT_EQ(comm, nullptr);
  unsetenv("LOOM_STEP_TRACE");
  params::resetCacheForTesting();
}

}  // namespace
}  // namespace loom::testing
