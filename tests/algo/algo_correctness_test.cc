// Every registered reduce/gather/broadcast algorithm gives the exact result in the in-memory
// checker (rendezvous sends, random step order) for p = 1..17 and counts 0, 1, p-1, 1000, in and
// out of place, plus 2^20+3 elements for a few p, several host layouts and pipeline chunk sizes.
#include <gtest/gtest.h>

#include "algo/registry.h"
#include "sched/checker.h"

namespace loom::algo {
namespace {

using sched::CollType;

const CollType kColls[] = {CollType::kAllReduce, CollType::kReduceScatter, CollType::kAllGather,
                           CollType::kBroadcast, CollType::kReduce};

Status check(const AlgoInfo* a, CollArgs args, int p, const std::vector<int>& hostOf = {}) {
  return sched::checkCollective(a->build, args, p, hostOf);
}

std::string label(const AlgoInfo* a) { return strCat(sched::collName(a->coll), ":", a->name); }

TEST(AlgoCorrectness, AllRanksAllSmallCounts) {
  for (CollType c : kColls) {
    for (const AlgoInfo* a : algosFor(c, /*withHost=*/true)) {
      for (int p = 1; p <= 17; ++p) {
        for (uint64_t count : {uint64_t{0}, uint64_t{1}, uint64_t(p - 1), uint64_t{1000}}) {
          for (bool inPlace : {false, true}) {
            CollArgs args;
            args.coll = c;
            args.count = count;
            args.inPlace = inPlace;
            args.root = p / 2;
            args.chunkBytes = 256;  // many pipeline chunks at count 1000
            Status s = check(a, args, p);
            ASSERT_TRUE(s.ok()) << label(a) << " p=" << p << " count=" << count
                                << (inPlace ? " in-place: " : ": ") << s.toString();
          }
        }
      }
    }
  }
}

TEST(AlgoCorrectness, LargeCount) {
  for (CollType c : kColls) {
    for (const AlgoInfo* a : algosFor(c, /*withHost=*/true)) {
      for (int p : {2, 3, 5, 8}) {
        CollArgs args;
        args.coll = c;
        args.count = (uint64_t{1} << 20) + 3;
        if (c == CollType::kAllGather || c == CollType::kReduceScatter) args.count /= p;
        args.inPlace = p == 3;
        args.root = p - 1;
        Status s = check(a, args, p);
        ASSERT_TRUE(s.ok()) << label(a) << " p=" << p << ": " << s.toString();
      }
    }
  }
}

TEST(AlgoCorrectness, DtypesOpsRoots) {
  const DataType dts[] = {DataType::kInt8, DataType::kFloat16, DataType::kFloat64,
                          DataType::kBfloat16, DataType::kUint32};
  const RedOp ops[] = {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin, RedOp::kAvg};
  for (CollType c : kColls) {
    for (const AlgoInfo* a : algosFor(c, /*withHost=*/true)) {
      for (int p : {3, 6, 7}) {
        for (int k = 0; k < 5; ++k) {
          CollArgs args;
          args.coll = c;
          args.count = 37 + k;
          args.dtype = dts[k];
          args.op = ops[(k + p) % 5];
          args.root = (k * 5) % p;
          args.chunkBytes = 16;
          Status s = check(a, args, p);
          ASSERT_TRUE(s.ok()) << label(a) << " p=" << p << ": " << s.toString();
        }
      }
    }
  }
}

// Host layouts matter to the hierarchical builders (and must not break the flat ones).
TEST(AlgoCorrectness, HostLayouts) {
  const std::vector<std::vector<int>> layouts = {
      {0, 0, 0, 0, 1, 1, 1, 1},                 // 2 nodes x 4
      {0, 1, 0, 1, 0, 1},                       // interleaved
      {0, 0, 0, 1, 1, 2, 2},                    // unequal parts: folds
      {5, 5, 5, 9, 9, 9, 2, 2, 2, 7, 7, 7},     // 4 nodes x 3, arbitrary host ids
      {0, 0, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3},  // 2..4 per node
      {0, 0, 0, 0, 0},                          // one node
      {0, 1, 2, 3, 4},                          // one rank per node
  };
  for (const auto& hosts : layouts) {
    const int p = static_cast<int>(hosts.size());
    for (const AlgoInfo* a : algosFor(CollType::kAllReduce)) {
      for (uint64_t count : {uint64_t{1}, uint64_t(p + 1), uint64_t{1000}, uint64_t{100003}}) {
        for (bool inPlace : {false, true}) {
          CollArgs args;
          args.count = count;
          args.inPlace = inPlace;
          args.chunkBytes = count > 2000 ? 4096 : 64;
          Status s = check(a, args, p, hosts);
          ASSERT_TRUE(s.ok()) << label(a) << " p=" << p << " count=" << count
                              << " host[1]=" << hosts[1] << ": " << s.toString();
        }
      }
    }
  }
}

}  // namespace
}  // namespace loom::algo
