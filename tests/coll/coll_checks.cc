#include "coll/coll_checks.h"

#include <cstring>
#include <vector>

#include "coll/expect.h"

namespace loom::testing {

using Bytes = std::vector<char>;

std::string allReduce(loomComm_t comm, int rank, int p, uint64_t n, loomDataType_t dt,
                      loomRedOp_t op, bool inPlace) {
  size_t es = typeSize(dt);
  Bytes send(n * es + 1), recv(n * es + 1);
  fillInput(send.data(), n, dt, op, rank, 0);
  if (inPlace) {
    LOOM_TRY(loomAllReduce(send.data(), send.data(), n, dt, op, comm, nullptr));
    recv = send;
  } else {
    LOOM_TRY(loomAllReduce(send.data(), recv.data(), n, dt, op, comm, nullptr));
  }
  return compare(
      recv.data(), n, dt, [&](uint64_t i) { return expectedReduced(op, p, i, dt); }, "allreduce");
}

std::string broadcast(loomComm_t comm, int rank, int p, uint64_t n, bool inPlace) {
  const loomDataType_t dt = loomInt32;
  const int root = p - 1;
  Bytes send(n * 4 + 1), recv(n * 4 + 1);
  fillInput(send.data(), n, dt, loomSum, rank, 0);
  void* r = inPlace ? send.data() : recv.data();
  LOOM_TRY(loomBroadcast(send.data(), r, n, dt, root, comm, nullptr));
  return compare(
      r, n, dt, [&](uint64_t i) { return inputValue(loomSum, root, i); }, "broadcast");
}

std::string reduce(loomComm_t comm, int rank, int p, uint64_t n, bool inPlace) {
  const loomDataType_t dt = loomFloat32;
  const int root = p / 2;
  Bytes send(n * 4 + 1), recv(n * 4 + 1);
  fillInput(send.data(), n, dt, loomMax, rank, 0);
  void* r = inPlace ? send.data() : recv.data();
  LOOM_TRY(loomReduce(send.data(), r, n, dt, loomMax, root, comm, nullptr));
  if (rank != root) return "";
  return compare(
      r, n, dt, [&](uint64_t i) { return expectedReduced(loomMax, p, i, dt); }, "reduce");
}

std::string allGather(loomComm_t comm, int rank, int p, uint64_t n, bool inPlace) {
  const loomDataType_t dt = loomUint8;
  Bytes send(n + 1), recv(n * p + 1);
  fillInput(send.data(), n, dt, loomSum, rank, 0);
  const void* s = send.data();
  if (inPlace) {
    std::memcpy(recv.data() + rank * n, send.data(), n);
    s = recv.data() + rank * n;
  }
  LOOM_TRY(loomAllGather(s, recv.data(), n, dt, comm, nullptr));
  return compare(
      recv.data(), n * p, dt,
      [&](uint64_t i) { return inputValue(loomSum, static_cast<int>(i / n), i % n); }, "allgather");
}

std::string reduceScatter(loomComm_t comm, int rank, int p, uint64_t n, bool inPlace) {
  const loomDataType_t dt = loomBfloat16;
  const size_t es = 2;
  Bytes send(n * p * es + 1), recv(n * es + 1);
  fillInput(send.data(), n * p, dt, loomSum, rank, 0);
  void* r = inPlace ? send.data() + rank * n * es : recv.data();
  LOOM_TRY(loomReduceScatter(send.data(), r, n, dt, loomSum, comm, nullptr));
  return compare(
      r, n, dt, [&](uint64_t i) { return expectedReduced(loomSum, p, rank * n + i, dt); },
      "reducescatter");
}

std::string allToAll(loomComm_t comm, int rank, int p, uint64_t n) {
  const loomDataType_t dt = loomInt64;
  Bytes send(n * p * 8 + 1), recv(n * p * 8 + 1);
  fillInput(send.data(), n * p, dt, loomSum, rank, 0);
  LOOM_TRY(loomAllToAll(send.data(), recv.data(), n, dt, comm, nullptr));
  // Block j of our output is block `rank` of rank j's input.
  return compare(
      recv.data(), n * p, dt,
      [&](uint64_t i) { return inputValue(loomSum, static_cast<int>(i / n), rank * n + i % n); },
      "alltoall");
}

std::string sendRecvRing(loomComm_t comm, int rank, int p, uint64_t n) {
  if (p == 1) return "";
  const loomDataType_t dt = loomFloat64;
  Bytes send(n * 8 + 1), recv(n * 8 + 1);
  fillInput(send.data(), n, dt, loomSum, rank, 0);
  LOOM_TRY(loomGroupStart());
  LOOM_TRY(loomSend(send.data(), n, dt, (rank + 1) % p, comm, nullptr));
  LOOM_TRY(loomRecv(recv.data(), n, dt, (rank + p - 1) % p, comm, nullptr));
  LOOM_TRY(loomGroupEnd());
  int from = (rank + p - 1) % p;
  return compare(
      recv.data(), n, dt, [&](uint64_t i) { return inputValue(loomSum, from, i); }, "sendrecv");
}

std::string streamAndGroup(loomComm_t comm, int rank, int p, uint64_t n) {
  // Two all-reduces of different types in one group, queued on a stream.
  loomStream_t stream;
  LOOM_TRY(loomStreamCreate(&stream));
  Bytes a(n * 4 + 1), b(n * 2 + 1);
  fillInput(a.data(), n, loomInt32, loomAvg, rank, 0);
  fillInput(b.data(), n, loomFloat16, loomSum, rank, 0);
  LOOM_TRY(loomGroupStart());
  LOOM_TRY(loomAllReduce(a.data(), a.data(), n, loomInt32, loomAvg, comm, stream));
  LOOM_TRY(loomAllReduce(b.data(), b.data(), n, loomFloat16, loomSum, comm, stream));
  LOOM_TRY(loomGroupEnd());
  LOOM_TRY(loomBarrier(comm, stream));
  LOOM_TRY(loomStreamSynchronize(stream, 60000));
  LOOM_TRY(loomStreamQuery(stream));
  LOOM_TRY(loomStreamDestroy(stream));
  std::string e = compare(
      a.data(), n, loomInt32, [&](uint64_t i) { return expectedReduced(loomAvg, p, i, loomInt32); },
      "avg int32");
  if (!e.empty()) return e;
  return compare(
      b.data(), n, loomFloat16,
      [&](uint64_t i) { return expectedReduced(loomSum, p, i, loomFloat16); }, "sum half");
}

std::string everyCollective(loomComm_t comm, int rank, int p,
                            std::initializer_list<uint64_t> counts) {
  for (uint64_t n : counts) {
    for (bool inPlace : {false, true}) {
      std::string tag = " (n=" + std::to_string(n) + (inPlace ? ", in place)" : ")");
      for (auto [dt, op] : {std::pair{loomFloat32, loomSum}, std::pair{loomInt8, loomMax},
                            std::pair{loomUint64, loomProd}, std::pair{loomFloat64, loomAvg}}) {
        std::string e = allReduce(comm, rank, p, n, dt, op, inPlace);
        if (!e.empty()) return e + tag;
      }
      for (std::string e :
           {broadcast(comm, rank, p, n, inPlace), reduce(comm, rank, p, n, inPlace),
            allGather(comm, rank, p, n, inPlace), reduceScatter(comm, rank, p, n, inPlace)})
        if (!e.empty()) return e + tag;
    }
    for (std::string e : {allToAll(comm, rank, p, n), sendRecvRing(comm, rank, p, n),
                          streamAndGroup(comm, rank, p, n)})
      if (!e.empty()) return e + " (n=" + std::to_string(n) + ")";
  }
  return "";
}

}  // namespace loom::testing
