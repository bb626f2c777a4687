// Bad arguments get loomInvalidArgument / loomInvalidUsage with a message naming the argument;
// never a crash or hang.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/rank_harness.h"

namespace loom::testing {
namespace {

#define EXPECT_FAILS(call, code, word)                                                   \
  do {                                                                                   \
    loomResult_t r_ = (call);                                                            \
    if (r_ != (code)) return std::string(#call) + " returned " + loomGetErrorString(r_); \
    std::string m_ = loomGetLastError(comm);                                             \
    if (m_.find(word) == std::string::npos)                                              \
      return std::string(#call) + " message '" + m_ + "' does not name " + word;         \
  } while (0)

TEST(ApiErrors, NoCommunicatorNeeded) {
  EXPECT_EQ(loomGetVersion(nullptr), loomInvalidArgument);
  EXPECT_EQ(loomGetUniqueId(nullptr), loomInvalidArgument);
  loomUniqueId id;
  EXPECT_EQ(loomUniqueIdFromString("zz-not-hex", &id), loomInvalidArgument);
  loomComm_t comm = nullptr;
  EXPECT_EQ(loomCommInitRank(nullptr, 2, id, 0), loomInvalidArgument);
  EXPECT_EQ(loomCommInitRank(&comm, 0, id, 0), loomInvalidArgument);
  EXPECT_NE(std::string(loomGetLastError(nullptr)).find("nranks"), std::string::npos);
  EXPECT_EQ(loomCommInitRank(&comm, 2, id, 2), loomInvalidArgument);
  EXPECT_NE(std::string(loomGetLastError(nullptr)).find("rank"), std::string::npos);
  int x = 0;
  EXPECT_EQ(loomAllReduce(&x, &x, 1, loomInt32, loomSum, nullptr, nullptr), loomInvalidArgument);
  EXPECT_NE(std::string(loomGetLastError(nullptr)).find("comm"), std::string::npos);
  EXPECT_EQ(loomGroupEnd(), loomInvalidUsage);
  EXPECT_EQ(loomStreamSynchronize(nullptr, 0), loomInvalidArgument);
  int version = 0;
  EXPECT_EQ(loomGetVersion(&version), loomSuccess);
  EXPECT_EQ(version, LOOM_VERSION_CODE);
  EXPECT_STREQ(loomGetErrorString(loomTimeout), "operation timed out");
}

std::string badArgs(int rank, int p, loomComm_t comm) {
  std::vector<float> a(64), b(64);
  EXPECT_FAILS(loomAllReduce(nullptr, b.data(), 4, loomFloat32, loomSum, comm, nullptr),
               loomInvalidArgument, "sendbuff");
  EXPECT_FAILS(loomAllReduce(a.data(), nullptr, 4, loomFloat32, loomSum, comm, nullptr),
               loomInvalidArgument, "recvbuff");
  EXPECT_FAILS(
      loomAllReduce(a.data(), b.data(), 4, static_cast<loomDataType_t>(42), loomSum, comm, nullptr),
      loomInvalidArgument, "datatype");
  EXPECT_FAILS(loomAllReduce(a.data(), b.data(), 4, loomFloat32, static_cast<loomRedOp_t>(-1), comm,
                             nullptr),
               loomInvalidArgument, "op");
  EXPECT_FAILS(loomAllReduce(a.data(), b.data(), SIZE_MAX / 2, loomFloat32, loomSum, comm, nullptr),
               loomInvalidArgument, "overflows");
  EXPECT_FAILS(loomAllReduce(a.data(), a.data() + 1, 8, loomFloat32, loomSum, comm, nullptr),
               loomInvalidArgument, "overlap");
  EXPECT_FAILS(loomBroadcast(a.data(), b.data(), 4, loomFloat32, p, comm, nullptr),
               loomInvalidArgument, "root");
  EXPECT_FAILS(loomReduce(a.data(), b.data(), 4, loomFloat32, loomSum, -1, comm, nullptr),
               loomInvalidArgument, "root");
  EXPECT_FAILS(loomSend(a.data(), 4, loomFloat32, p + 3, comm, nullptr), loomInvalidArgument,
               "peer");
  EXPECT_FAILS(loomRecv(a.data(), 4, loomFloat32, rank, comm, nullptr), loomInvalidArgument,
               "peer");
  EXPECT_FAILS(loomAllGather(a.data(), a.data() + 1, 4, loomFloat32, comm, nullptr),
               loomInvalidArgument, "overlap");
  EXPECT_FAILS(loomAllReduce(a.data(), b.data(), 4, loomFloat32, loomSum, comm,
                             reinterpret_cast<loomStream_t>(&a)),
               loomInvalidArgument, "stream");
  EXPECT_FAILS(loomCommSplit(comm, -5, 0, nullptr, nullptr), loomInvalidArgument, "newcomm");
  // The communicator still works after all that.
  float v = 1, s = 0;
  loomResult_t r = loomAllReduce(&v, &s, 1, loomFloat32, loomSum, comm, nullptr);
  if (r != loomSuccess || s != static_cast<float>(p)) return "allreduce after errors failed";
  return "";
}

TEST(ApiErrors, BadArgumentsOnALiveCommunicator) { EXPECT_EQ(failures(runRanks(2, badArgs)), ""); }

TEST(ApiErrors, UseAfterDestroyIsReported) {
  auto res = runRanks(1, [](int, int, loomComm_t) -> std::string {
    loomUniqueId id;
    loomComm_t comm = nullptr;
    if (loomGetUniqueId(&id) != loomSuccess) return "id";
    if (loomCommInitRank(&comm, 1, id, 0) != loomSuccess) return "init";
    if (loomCommDestroy(comm) != loomSuccess) return "destroy";
    int x = 1;
    if (loomAllReduce(&x, &x, 1, loomInt32, loomSum, comm, nullptr) != loomInvalidUsage)
      return "use after destroy not reported";
    if (loomCommDestroy(comm) == loomSuccess) return "double destroy not reported";
    return "";
  });
  EXPECT_EQ(failures(res), "");
}

}  // namespace
}  // namespace loom::testing

namespace loom::testing {
namespace {

TEST(ApiErrors, UnknownForcedAlgorithmIsAnErrorNotAFallback) {
  RankOptions opt;
  opt.env = {{"LOOM_ALGO", "allreduce:nosuch"}};
  auto res = runRanks(
      2,
      [](int, int, loomComm_t comm) -> std::string {
        float v = 1, s = 0;
        EXPECT_FAILS(loomAllReduce(&v, &s, 1, loomFloat32, loomSum, comm, nullptr),
                     loomInvalidArgument, "nosuch");
        return "";
      },
      opt);
  EXPECT_EQ(failures(res), "");
}

}  // namespace
}  // namespace loom::testing
