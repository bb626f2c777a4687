#include "perf_colls.h"

#include <cstring>

#include "perf_data.h"

namespace loom::perf {
namespace {

const CollInfo kColls[] = {
    {CollKind::kAllReduce, "all_reduce", "allreduce", true, false, true},
    {CollKind::kAllGather, "all_gather", "allgather", false, false, true},
    {CollKind::kReduceScatter, "reduce_scatter", "reducescatter", true, false, true},
    {CollKind::kBroadcast, "broadcast", "broadcast", false, true, true},
    {CollKind::kReduce, "reduce", "reduce", true, true, true},
    {CollKind::kAllToAll, "alltoall", "alltoall", false, false, false},
    {CollKind::kSendRecv, "sendrecv", "send", false, false, false},
};

constexpr unsigned char kPoison = 0xA5;

// The value this rank expects at output element j.
double expectedAt(const CollCall& call, const CollSizes& sizes, size_t j) {
  const CollInfo& c = *call.coll;
  const int n = call.nranks;
  switch (c.kind) {
    case CollKind::kAllReduce:
    case CollKind::kReduce:
      return reducedValue(call.dt, call.op, n, j);
    case CollKind::kReduceScatter:
      return reducedValue(call.dt, call.op, n, call.rank * sizes.count + j);
    case CollKind::kAllGather:
      return inputValue(call.dt, call.op, false, n, static_cast<int>(j / sizes.count),
                        j % sizes.count);
    case CollKind::kAllToAll:
      return inputValue(call.dt, call.op, false, n, static_cast<int>(j / sizes.count),
                        call.rank * sizes.count + j % sizes.count);
    case CollKind::kBroadcast:
      return inputValue(call.dt, call.op, false, n, call.root, j);
    case CollKind::kSendRecv:
      return inputValue(call.dt, call.op, false, n, sendrecvFrom(call), j);
  }
  return 0;
}

}  // namespace

const CollInfo* collTable(int* count) {
  *count = static_cast<int>(sizeof(kColls) / sizeof(kColls[0]));
  return kColls;
}

const CollInfo* findColl(const std::string& name) {
  std::string base = name;
  const std::string suffix = "_perf";
  if (base.size() > suffix.size() &&
      base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0) {
    base.resize(base.size() - suffix.size());
  }
  for (const CollInfo& c : kColls) {
    if (base == c.name || base == c.algoName) return &c;
  }
  return nullptr;
}

CollSizes collSizes(const CollInfo& c, size_t bytes, size_t typeSize, int nranks) {
  CollSizes s;
  const size_t total = bytes / typeSize;
  const size_t n = static_cast<size_t>(nranks);
  switch (c.kind) {
    case CollKind::kAllGather:
      s.count = total / n;
      s.sendCount = s.count;
      s.recvCount = s.count * n;
      break;
    case CollKind::kReduceScatter:
      s.count = total / n;
      s.sendCount = s.count * n;
      s.recvCount = s.count;
      break;
    case CollKind::kAllToAll:
      s.count = total / n;
      s.sendCount = s.recvCount = s.count * n;
      break;
    default:
      s.count = s.sendCount = s.recvCount = total;
      break;
  }
  s.sizeBytes = (s.sendCount > s.recvCount ? s.sendCount : s.recvCount) * typeSize;
  bool perRankCount = c.kind == CollKind::kAllGather || c.kind == CollKind::kReduceScatter ||
                      c.kind == CollKind::kAllToAll;
  s.algBytes = static_cast<double>(s.count * typeSize) * (perRankCount ? nranks : 1);
  return s;
}

double busFactor(const CollInfo& c, int nranks) {
  const double n = nranks;
  switch (c.kind) {
    case CollKind::kAllReduce:
      return 2.0 * (n - 1) / n;
    case CollKind::kAllGather:
    case CollKind::kReduceScatter:
    case CollKind::kAllToAll:
      return (n - 1) / n;
    default:
      return 1.0;
  }
}

void placeBuffers(CollCall* call, const CollSizes& sizes, char* sendBase, char* recvBase) {
  const size_t ts = typeSize(call->dt);
  call->count = sizes.count;
  call->send = sendBase;
  call->recv = recvBase;
  if (!call->inPlace) return;
  const size_t slot = call->rank * sizes.count * ts;
  switch (call->coll->kind) {
    case CollKind::kAllGather:  // own block of the output is the input
      call->send = recvBase + slot;
      break;
    case CollKind::kReduceScatter:  // own block of the input is the output
      call->send = recvBase;
      call->recv = recvBase + slot;
      break;
    default:
      call->send = recvBase;
      break;
  }
}

void fillInputs(const CollCall& call, const CollSizes& sizes) {
  const size_t ts = typeSize(call.dt);
  // Poison the output first: in place, the input written next overlays part of it.
  std::memset(call.recv, kPoison, sizes.recvCount * ts);
  void* send = const_cast<void*>(call.send);
  for (size_t i = 0; i < sizes.sendCount; ++i) {
    storeValue(send, i, call.dt,
               inputValue(call.dt, call.op, call.coll->reduces, call.nranks, call.rank, i));
  }
}

size_t countWrong(const CollCall& call, const CollSizes& sizes) {
  if (call.coll->kind == CollKind::kReduce && call.rank != call.root) return 0;
  size_t wrong = 0;
  for (size_t j = 0; j < sizes.recvCount; ++j) {
    double got = loadValue(call.recv, j, call.dt);
    if (!(got == expectedAt(call, sizes, j))) ++wrong;
  }
  return wrong;
}

}  // namespace loom::perf
