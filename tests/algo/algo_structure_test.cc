// Structural checks on schedules, independent of the data check: every contribution is reduced
// exactly once, no step reads bytes no dependency wrote, and the bytes each rank puts on the wire
// match the algorithm's cost formula.
#include <gtest/gtest.h>

#include <cstring>

#include "algo/butterfly.h"
#include "algo/registry.h"
#include "algo/trees.h"
#include "sched/checker.h"
#include "schedule_analysis.h"

namespace loom::algo {
namespace {

using sched::CollType;

std::vector<Schedule> buildAll(const AlgoInfo* a, const CollArgs& args, int p,
                               const std::vector<int>& hostOf = {}) {
  std::vector<Schedule> out(p);
  for (int r = 0; r < p; ++r) {
    Status s = a->build(args, Group{r, p, hostOf}, &out[r]);
    EXPECT_TRUE(s.ok()) << s.toString();
  }
  return out;
}

TEST(AlgoStructure, RegistryHasTheAlgorithms) {
  for (const char* n : {"ring", "tree", "rd", "rabenseifner", "hier", "hier_tree"})
    EXPECT_NE(findAlgo(CollType::kAllReduce, n), nullptr) << n;
  EXPECT_NE(findAlgo(CollType::kReduceScatter, "halving"), nullptr);
  EXPECT_NE(findAlgo(CollType::kAllGather, "rd"), nullptr);
  EXPECT_NE(findAlgo(CollType::kBroadcast, "binomial"), nullptr);
  EXPECT_NE(findAlgo(CollType::kReduce, "binomial"), nullptr);
  EXPECT_NE(findAlgo(CollType::kBroadcast, "tree"), nullptr);
  EXPECT_NE(findAlgo(CollType::kReduce, "tree"), nullptr);
}

// Rank r contributes 1 << (3r) to every element (uint64 sum). A contribution reduced twice or
// dropped shows as a 3-bit field != 1; unlike small-integer checks no coincidence can hide it.
TEST(AlgoStructure, EveryContributionReducedExactlyOnce) {
  const std::vector<int> hosts = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 5, 5, 5};
  for (CollType c : {CollType::kAllReduce, CollType::kReduceScatter, CollType::kReduce}) {
    for (const AlgoInfo* a : algosFor(c)) {
      for (int p = 2; p <= 17; ++p) {
        CollArgs args;
        args.coll = c;
        args.count = 29;
        args.dtype = DataType::kUint64;
        args.chunkBytes = 64;
        args.root = p - 1;
        std::vector<int> hostOf(hosts.begin(), hosts.begin() + p);
        sched::MemoryRun run;
        run.dtype = DataType::kUint64;
        run.schedules = buildAll(a, args, p, hostOf);
        const uint64_t inElems = c == CollType::kReduceScatter ? args.count * p : args.count;
        const uint64_t outElems = args.count;
        std::vector<std::vector<uint64_t>> in(p), out(p);
        for (int r = 0; r < p; ++r) {
          in[r].assign(inElems, uint64_t{1} << (3 * r));
          out[r].assign(outElems, 0);
          run.buffers.push_back({reinterpret_cast<uint8_t*>(in[r].data()),
                                 reinterpret_cast<uint8_t*>(out[r].data()), nullptr});
          run.bufferBytes.push_back({inElems * 8, outElems * 8, 0});
        }
        Status s = sched::runInMemory(&run);
        ASSERT_TRUE(s.ok()) << a->name << " p=" << p << ": " << s.toString();
        uint64_t want = 0;
        for (int r = 0; r < p; ++r) want |= uint64_t{1} << (3 * r);
        for (int r = 0; r < p; ++r) {
          if (c == CollType::kReduce && r != args.root) continue;
          for (uint64_t i = 0; i < outElems; ++i)
            ASSERT_EQ(out[r][i], want) << sched::collName(c) << ":" << a->name << " p=" << p
                                       << " rank " << r << " element " << i;
        }
      }
    }
  }
}

TEST(AlgoStructure, NoReadBeforeWrite) {
  for (CollType c : {CollType::kAllReduce, CollType::kReduceScatter, CollType::kAllGather,
                     CollType::kBroadcast, CollType::kReduce}) {
    for (const AlgoInfo* a : algosFor(c)) {
      for (int p : {2, 3, 4, 6, 7, 8, 12, 13}) {
        CollArgs args;
        args.coll = c;
        args.count = 1001;
        args.chunkBytes = 512;
        args.root = 1;
        std::vector<int> hostOf(p);
        for (int r = 0; r < p; ++r) hostOf[r] = r / 3;
        std::vector<Schedule> all = buildAll(a, args, p, hostOf);
        for (int r = 0; r < p; ++r) {
          std::string bad = testing::readBeforeWrite(all[r]);
          EXPECT_EQ(bad, "") << sched::collName(c) << ":" << a->name << " p=" << p << " rank " << r;
        }
      }
    }
  }
}

uint64_t sentBy(const AlgoInfo* a, const CollArgs& args, int p, int r) {
  Schedule s;
  EXPECT_TRUE(a->build(args, Group{r, p, {}}, &s).ok());
  return s.bytesSent();
}

TEST(AlgoStructure, BytesOnTheWireMatchFormulas) {
  CollArgs args;
  args.count = 1 << 16;  // divisible by every power of two used below
  const uint64_t N = args.count * 4;
  const AlgoInfo* rd = findAlgo(CollType::kAllReduce, "rd");
  const AlgoInfo* rab = findAlgo(CollType::kAllReduce, "rabenseifner");
  const AlgoInfo* tree = findAlgo(CollType::kAllReduce, "tree");
  for (int p : {2, 4, 8, 16}) {
    int lg = 0;
    while ((1 << lg) < p) ++lg;
    for (int r = 0; r < p; ++r) {
      EXPECT_EQ(sentBy(rd, args, p, r), lg * N) << "rd p=" << p;                 // lg p * N
      EXPECT_EQ(sentBy(rab, args, p, r), 2 * (p - 1) * N / p) << "rab p=" << p;  // 2(p-1)/p N
    }
  }
  // Non-power-of-two: the fold adds N for the extra rank and its partner.
  for (int p : {3, 5, 6, 7, 12}) {
    Fold f(p);
    for (int r = 0; r < p; ++r) {
      uint64_t core = 2 * (f.pow2 - 1) * N / f.pow2;
      if (f.isExtra(r))
        EXPECT_EQ(sentBy(rab, args, p, r), N);
      else if (r < 2 * f.extra)
        EXPECT_EQ(sentBy(rab, args, p, r), core + N);
      else
        EXPECT_EQ(sentBy(rab, args, p, r), core);
    }
  }
  // Double binary tree: per tree every non-root sends its half up once and every child gets it
  // down once, so all ranks together send 2 (p-1) N, and no rank sends more than 2.5 N
  // (interior in one tree: up N/2 + down 2 x N/2; leaf in the other: N/2).
  for (int p = 2; p <= 17; ++p) {
    uint64_t total = 0;
    for (int r = 0; r < p; ++r) {
      uint64_t b = sentBy(tree, args, p, r);
      total += b;
      EXPECT_LE(b, 5 * N / 2) << "tree p=" << p << " rank " << r;
    }
    EXPECT_EQ(total, 2 * uint64_t(p - 1) * N) << "tree p=" << p;
  }
}

TEST(AlgoStructure, DoubleTreeInteriorInAtMostOneTree) {
  for (int p = 2; p <= 64; ++p) {
    int roots[2] = {0, 0};
    for (int r = 0; r < p; ++r) {
      TreeNode a = doubleTreeNode(r, p, 0), b = doubleTreeNode(r, p, 1);
      EXPECT_FALSE(!a.children.empty() && !b.children.empty() && a.parent >= 0 && b.parent >= 0)
          << "p=" << p << " rank " << r << " interior in both trees";
      roots[0] += a.parent < 0;
      roots[1] += b.parent < 0;
    }
    EXPECT_EQ(roots[0], 1);
    EXPECT_EQ(roots[1], 1);
  }
}

// Hierarchical: with 4 nodes x 4 ranks each rank sends 2 (N-1)/N * N/L bytes off-node (spread over
// all L ranks and their NICs), where a node-ordered flat ring pushes 2 (p-1)/p N through one rank.
TEST(AlgoStructure, HierKeepsTrafficInsideNodes) {
  const AlgoInfo* hier = findAlgo(CollType::kAllReduce, "hier");
  const AlgoInfo* ring = findAlgo(CollType::kAllReduce, "ring");
  const int p = 16, L = 4, Nn = 4;
  std::vector<int> hostOf(p);
  for (int r = 0; r < p; ++r) hostOf[r] = r / L;
  CollArgs args;
  args.count = 1 << 16;
  args.chunkBytes = 1 << 20;
  const uint64_t N = args.count * 4;
  auto offNode = [&](const AlgoInfo* a, int r) {
    Schedule s;
    EXPECT_TRUE(a->build(args, Group{r, p, hostOf}, &s).ok());
    uint64_t b = 0;
    for (const auto& st : s.steps)
      if (st.op == sched::OpKind::kSend && hostOf[st.peer] != hostOf[r]) b += st.bytes;
    return b;
  };
  uint64_t hierMax = 0, ringMax = 0, hierNode = 0, ringNode = 0;
  for (int r = 0; r < p; ++r) {
    EXPECT_EQ(offNode(hier, r), 2 * (Nn - 1) * (N / L) / Nn) << "rank " << r;
    hierMax = std::max(hierMax, offNode(hier, r));
    ringMax = std::max(ringMax, offNode(ring, r));
    if (hostOf[r] == 0) hierNode += offNode(hier, r), ringNode += offNode(ring, r);
  }
  EXPECT_EQ(ringMax, 2 * (p - 1) * N / p);
  EXPECT_EQ(hierMax * 5, ringMax);  // 0.375 N vs 1.875 N
  EXPECT_LT(hierNode, ringNode);    // 1.5 N vs 1.875 N leave each node
}

}  // namespace
}  // namespace loom::algo
