// Every collective and send/recv through the public API over the ucx transport (LOOM_TRANSPORT=ucx)
// in real multi-process runs, p in {2, 3, 4, 5, 8}, in place and out of place, with UCX restricted
// to its tcp transport and to its shared-memory transports (UCX_TLS); the same exact checks as
// tests/coll over shm and tcp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "coll/coll_checks.h"
#include "harness/rank_harness.h"

namespace loom::testing {
namespace {

// UCX_TLS values: UCX's tcp transport only, and its shared-memory transports (posix/sysv/cma).
class UcxCollectives : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(UcxCollectives, EveryCollectiveExact) {
  auto [tls, p] = GetParam();
  RankOptions opt;
  opt.transport = "ucx";
  opt.killAfterMs = 600000;
  opt.env = {{"UCX_TLS", tls}};
  auto res = runRanks(
      p,
      [](int rank, int p, loomComm_t comm) {
        return everyCollective(comm, rank, p, {0, 1, 1000, 65536 + 3, (1 << 20) + 5});
      },
      opt);
  EXPECT_EQ(failures(res), "");
}

INSTANTIATE_TEST_SUITE_P(Ranks, UcxCollectives,
                         ::testing::Combine(::testing::Values("tcp", "sm"),
                                            ::testing::Values(2, 3, 4, 5, 8)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_p" +
                                  std::to_string(std::get<1>(info.param));
                         });

// A receive posted for fewer elements than the peer sends is an error naming the peer, not a
// silently short result.
TEST(UcxTransport, SizeMismatchIsAnErrorNamingThePeer) {
  RankOptions opt;
  opt.transport = "ucx";
  opt.env = {{"UCX_TLS", "tcp"}};
  opt.commTimeoutMs = 20000;
  auto res = runRanks(
      2,
      [](int rank, int p, loomComm_t comm) -> std::string {
        std::vector<float> buf(17, 1.0f);
        if (rank == 0) {
          if (loomSend(buf.data(), 17, loomFloat32, 1, comm, nullptr) != loomSuccess)
            return std::string("send failed: ") + loomGetLastError(comm);
          return "";
        }
        loomResult_t r = loomRecv(buf.data(), 16, loomFloat32, 0, comm, nullptr);
        if (r == loomSuccess) return "mismatched receive succeeded";
        std::string msg = loomGetLastError(comm);
        if (r != loomInvalidUsage) return "wrong code: " + msg;
        if (msg.find("rank 0") == std::string::npos) return "error does not name rank 0: " + msg;
        return "";
      },
      opt);
  EXPECT_EQ(failures(res), "");
}

}  // namespace
}  // namespace loom::testing
