// loomGather, loomScatter and loomAllToAllv (uneven counts) in real multi-process runs over shm
// and tcp, in place and out of place, blocking and on a stream with a host callback after them;
// and their argument errors.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <numeric>
#include <vector>

#include "coll/coll_checks.h"
#include "harness/rank_harness.h"

namespace loom::testing {
namespace {

// Element i of rank r's contribution: distinct per (rank, index), exact in int32.
int32_t val(int r, uint64_t i) { return static_cast<int32_t>(r * 1000003 + i); }

std::string gather(loomComm_t comm, int rank, int p, uint64_t n, int root, bool inPlace,
                   loomStream_t st) {
  std::vector<int32_t> send(n), recv(n * p + 1, -1);
  for (uint64_t i = 0; i < n; ++i) send[i] = val(rank, i);
  const int32_t* s = send.data();
  if (inPlace && rank == root) {
    std::copy(send.begin(), send.end(), recv.begin() + rank * n);
    s = recv.data() + rank * n;
  }
  LOOM_TRY(loomGather(s, recv.data(), n, loomInt32, root, comm, st));
  if (st) LOOM_TRY(loomStreamSynchronize(st, 60000));
  if (rank != root) return "";
  for (int q = 0; q < p; ++q)
    for (uint64_t i = 0; i < n; ++i)
      if (recv[q * n + i] != val(q, i))
        return "gather: block " + std::to_string(q) + " element " + std::to_string(i) + " wrong";
  return recv[n * p] == -1 ? "" : "gather wrote past its buffer";
}

std::string scatter(loomComm_t comm, int rank, int p, uint64_t n, int root, bool inPlace,
                    loomStream_t st) {
  std::vector<int32_t> send(n * p), recv(n + 1, -1);
  if (rank == root)
    for (int q = 0; q < p; ++q)
      for (uint64_t i = 0; i < n; ++i) send[q * n + i] = val(q, i);
  int32_t* r = recv.data();
  if (inPlace && rank == root) r = send.data() + rank * n;
  LOOM_TRY(loomScatter(send.data(), r, n, loomInt32, root, comm, st));
  if (st) LOOM_TRY(loomStreamSynchronize(st, 60000));
  for (uint64_t i = 0; i < n; ++i)
    if (r[i] != val(rank, i)) return "scatter: element " + std::to_string(i) + " wrong";
  return inPlace && rank == root ? "" : (recv[n] == -1 ? "" : "scatter wrote past its buffer");
}

// Rank a sends (a + 2b) % 5 * scale elements to rank b; blocks are packed with a gap of one.
size_t cnt(int a, int b, size_t scale) { return static_cast<size_t>((a + 2 * b) % 5) * scale; }

std::string allToAllv(loomComm_t comm, int rank, int p, size_t scale, loomStream_t st) {
  std::vector<size_t> sc(p), sd(p), rc(p), rd(p);
  size_t sEnd = 0, rEnd = 0;
  for (int q = 0; q < p; ++q) {
    sc[q] = cnt(rank, q, scale);
    sd[q] = sEnd;
    sEnd += sc[q] + 1;
    rc[q] = cnt(q, rank, scale);
    rd[q] = rEnd;
    rEnd += rc[q] + 1;
  }
  std::vector<int32_t> send(sEnd + 1), recv(rEnd + 1, -1);
  for (int q = 0; q < p; ++q)
    for (size_t i = 0; i < sc[q]; ++i) send[sd[q] + i] = val(rank, q * 100000 + i);
  LOOM_TRY(loomAllToAllv(send.data(), sc.data(), sd.data(), recv.data(), rc.data(), rd.data(),
                         loomInt32, comm, st));
  if (st) LOOM_TRY(loomStreamSynchronize(st, 60000));
  for (int q = 0; q < p; ++q) {
    for (size_t i = 0; i < rc[q]; ++i)
      if (recv[rd[q] + i] != val(q, rank * 100000 + i))
        return "alltoallv: from " + std::to_string(q) + " element " + std::to_string(i) + " wrong";
    if (recv[rd[q] + rc[q]] != -1) return "alltoallv wrote into a gap";
  }
  return "";
}

std::string body(int rank, int p, loomComm_t comm) {
  for (uint64_t n : {1ull, 7ull, 100003ull}) {
    for (bool inPlace : {false, true}) {
      for (int root : {0, p - 1}) {
        std::string e = gather(comm, rank, p, n, root, inPlace, nullptr);
        if (e.empty()) e = scatter(comm, rank, p, n, root, inPlace, nullptr);
        if (!e.empty()) return e + " n=" + std::to_string(n) + " root=" + std::to_string(root);
      }
    }
  }
  for (size_t scale : {1, 3, 40001}) {
    std::string e = allToAllv(comm, rank, p, scale, nullptr);
    if (!e.empty()) return e + " scale=" + std::to_string(scale);
  }
  // The same on a stream, then a host callback that sees the earlier work done.
  loomStream_t st = nullptr;
  LOOM_TRY(loomStreamCreate(&st));
  std::string e = gather(comm, rank, p, 1000, 1 % p, false, st);
  if (e.empty()) e = scatter(comm, rank, p, 1000, 0, false, st);
  if (e.empty()) e = allToAllv(comm, rank, p, 7, st);
  std::atomic<int> calls{0};
  std::vector<int32_t> a(4096, rank), b(4096 * p);
  LOOM_TRY(loomAllGather(a.data(), b.data(), a.size(), loomInt32, comm, st));
  struct Cb {
    std::atomic<int>* calls;
    const std::vector<int32_t>* b;
    int p;
    bool sawResult = false;
    loomResult_t status = loomInternalError;
  } cb{&calls, &b, p};
  LOOM_TRY(loomStreamLaunchHostFunc(
      st,
      [](void* u, loomResult_t status) {
        auto* c = static_cast<Cb*>(u);
        c->status = status;
        c->sawResult = (*c->b)[4096 * (c->p - 1)] == c->p - 1;
        ++*c->calls;
      },
      &cb));
  LOOM_TRY(loomStreamSynchronize(st, 60000));
  LOOM_TRY(loomStreamDestroy(st));
  if (!e.empty()) return "on a stream: " + e;
  if (calls != 1 || cb.status != loomSuccess || !cb.sawResult)
    return "host callback did not run once after the all-gather";
  return "";
}

class GatherScatter : public ::testing::TestWithParam<std::string> {};

TEST_P(GatherScatter, ExactForRankCounts) {
  for (int p : {1, 2, 3, 4, 5}) {
    RankOptions opt;
    opt.transport = GetParam();
    ASSERT_EQ(failures(runRanks(p, body, opt)), "") << "p=" << p;
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, GatherScatter, ::testing::Values("shm", "tcp"));

TEST(GatherScatterErrors, BadArgumentsAreNamed) {
  auto res = runRanks(2, [](int rank, int p, loomComm_t comm) -> std::string {
    std::vector<int32_t> buf(64);
    std::vector<size_t> c(p, 1), d(p, 0);
    auto lastErr = [&] { return std::string(loomGetLastError(comm)); };
    if (loomGather(buf.data(), buf.data() + 8, 1, loomInt32, p, comm, nullptr) !=
            loomInvalidArgument ||
        lastErr().find("root") == std::string::npos)
      return "gather with root out of range: " + lastErr();
    if (loomScatter(buf.data(), buf.data(), 1, loomInt32, -1, comm, nullptr) !=
            loomInvalidArgument ||
        lastErr().find("root") == std::string::npos)
      return "scatter with root -1: " + lastErr();
    if (loomAllToAllv(buf.data(), nullptr, d.data(), buf.data() + 32, c.data(), d.data(), loomInt32,
                      comm, nullptr) != loomInvalidArgument ||
        lastErr().find("sendcounts") == std::string::npos)
      return "alltoallv with NULL sendcounts: " + lastErr();
    if (loomAllToAllv(buf.data(), c.data(), d.data(), buf.data(), c.data(), d.data(), loomInt32,
                      comm, nullptr) != loomInvalidArgument ||
        lastErr().find("overlap") == std::string::npos)
      return "alltoallv in place: " + lastErr();
    if (loomStreamLaunchHostFunc(nullptr, nullptr, nullptr) != loomInvalidArgument)
      return "host func on a NULL stream accepted";
    return "";
  });
  ASSERT_EQ(failures(res), "");
}

}  // namespace
}  // namespace loom::testing
