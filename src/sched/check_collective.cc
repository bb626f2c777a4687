// checkCollective: builds all ranks' schedules, fills inputs with small integers (so every sum,
// product, max and min is exact in every dtype, as nccl-tests does), runs them in memory and
// compares every output element with a reference reduced in rank order by the scalar kernels.
#include <cstring>

#include "kernels/reduce.h"
#include "sched/checker.h"

namespace loom::sched {
namespace {

void storeValue(uint8_t* p, DataType dt, int v) {
  switch (dt) {
    case DataType::kInt8: {
      int8_t x = static_cast<int8_t>(v);
      std::memcpy(p, &x, 1);
      break;
    }
    case DataType::kUint8: {
      uint8_t x = static_cast<uint8_t>(v);
      std::memcpy(p, &x, 1);
      break;
    }
    case DataType::kInt32: {
      int32_t x = v;
      std::memcpy(p, &x, 4);
      break;
    }
    case DataType::kUint32: {
      uint32_t x = static_cast<uint32_t>(v);
      std::memcpy(p, &x, 4);
      break;
    }
    case DataType::kInt64: {
      int64_t x = v;
      std::memcpy(p, &x, 8);
      break;
    }
    case DataType::kUint64: {
      uint64_t x = static_cast<uint64_t>(v);
      std::memcpy(p, &x, 8);
      break;
    }
    case DataType::kFloat16: {
      uint16_t x = kernels::floatToHalf(static_cast<float>(v));
      std::memcpy(p, &x, 2);
      break;
    }
    case DataType::kBfloat16: {
      uint16_t x = kernels::floatToBf16(static_cast<float>(v));
      std::memcpy(p, &x, 2);
      break;
    }
    case DataType::kFloat32: {
      float x = static_cast<float>(v);
      std::memcpy(p, &x, 4);
      break;
    }
    case DataType::kFloat64: {
      double x = v;
      std::memcpy(p, &x, 8);
      break;
    }
  }
}

int inputValue(RedOp op, int rank, uint64_t i) {
  if (op == RedOp::kProd) return ((rank + i) % 7 == 0) ? 2 : 1;
  return static_cast<int>((rank * 7 + i * 3 + 1) % 11);
}

void fill(std::vector<uint8_t>* buf, DataType dt, RedOp op, int rank, uint64_t firstIndex) {
  size_t es = dtypeSize(dt);
  for (uint64_t i = 0; i < buf->size() / es; ++i)
    storeValue(buf->data() + i * es, dt, inputValue(op, rank, firstIndex + i));
}

struct Layout {
  uint64_t sendElems, recvElems;
};

Layout layoutOf(const CollArgs& a, int p) {
  const uint64_t n = a.count, P = static_cast<uint64_t>(p);
  switch (a.coll) {
    case CollType::kAllGather:
      return {n, n * P};
    case CollType::kReduceScatter:
      return {n * P, n};
    case CollType::kAllToAll:
      return {n * P, n * P};
    case CollType::kGather:
      return {n, n * P};
    case CollType::kScatter:
      return {n * P, n};
    default:
      return {n, n};
  }
}

}  // namespace

Status checkCollective(const BuildFn& build, const CollArgs& args, int nranks,
                       const std::vector<int>& hostOf) {
  const int p = nranks;
  const size_t es = dtypeSize(args.dtype);
  const Layout lay = layoutOf(args, p);
  const RedOp op = args.op == RedOp::kAvg ? RedOp::kSum : args.op;
  MemoryRun run;
  run.dtype = args.dtype;
  run.op = op;
  std::vector<std::vector<uint8_t>> sendb(p), recvb(p), inputs(p);
  for (int r = 0; r < p; ++r) {
    Group g;
    g.rank = r;
    g.nranks = p;
    g.hostOf = hostOf;
    Schedule s;
    LOOM_CHECK(build(args, g, &s));
    run.schedules.push_back(std::move(s));
    inputs[r].resize(lay.sendElems * es);
    fill(&inputs[r], args.dtype, op, r, 0);
    recvb[r].assign(lay.recvElems * es + (args.inPlace ? lay.sendElems * es : 0), 0xEE);
    sendb[r] = inputs[r];
    uint8_t* sp = sendb[r].data();
    uint8_t* rp = recvb[r].data();
    uint64_t sBytes = lay.sendElems * es, rBytes = lay.recvElems * es;
    if (args.inPlace) {
      // NCCL's in-place layouts.
      if (args.coll == CollType::kAllGather || args.coll == CollType::kGather) {
        std::memcpy(rp + r * sBytes, inputs[r].data(), sBytes);
        sp = rp + r * sBytes;
      } else if (args.coll == CollType::kReduceScatter || args.coll == CollType::kScatter) {
        recvb[r] = inputs[r];
        sp = recvb[r].data();
        rp = sp + r * rBytes;
        rBytes = recvb[r].size() - r * rBytes;
      } else {
        std::memcpy(rp, inputs[r].data(), sBytes);
        sp = rp;
      }
    }
    run.buffers.push_back({sp, rp, nullptr});
    run.bufferBytes.push_back({sBytes, rBytes, 0});
  }
  LOOM_CHECK(runInMemory(&run));

  // Expected results.
  std::vector<uint8_t> reduced(lay.sendElems * es);
  if (lay.sendElems) std::memcpy(reduced.data(), inputs[0].data(), reduced.size());
  for (int r = 1; r < p; ++r)
    kernels::reduceScalar(reduced.data(), reduced.data(), inputs[r].data(), lay.sendElems,
                          args.dtype, op);
  for (int r = 0; r < p; ++r) {
    const uint8_t* got = run.buffers[r][kBufRecv];
    std::vector<uint8_t> want;
    switch (args.coll) {
      case CollType::kAllReduce:
        want = reduced;
        break;
      case CollType::kReduce:
        if (r != args.root) continue;
        want = reduced;
        break;
      case CollType::kBroadcast:
        want = inputs[args.root];
        break;
      case CollType::kReduceScatter:
        want.assign(reduced.begin() + r * lay.recvElems * es,
                    reduced.begin() + (r + 1) * lay.recvElems * es);
        break;
      case CollType::kAllGather:
        for (int q = 0; q < p; ++q) want.insert(want.end(), inputs[q].begin(), inputs[q].end());
        break;
      case CollType::kGather:
        if (r != args.root) continue;
        for (int q = 0; q < p; ++q) want.insert(want.end(), inputs[q].begin(), inputs[q].end());
        break;
      case CollType::kScatter:
        want.assign(inputs[args.root].begin() + r * lay.recvElems * es,
                    inputs[args.root].begin() + (r + 1) * lay.recvElems * es);
        break;
      case CollType::kAllToAll:
        for (int q = 0; q < p; ++q)
          want.insert(want.end(), inputs[q].begin() + r * args.count * es,
                      inputs[q].begin() + (r + 1) * args.count * es);
        break;
      default:
        continue;
    }
    for (size_t b = 0; b < want.size(); ++b) {
      if (got[b] != want[b])
        return internalError(run.schedules[r].algo, " ", collName(args.coll), " p=", p,
                             " count=", args.count, " ", dtypeName(args.dtype), " ", opName(op),
                             args.inPlace ? " in-place" : "", ": rank ", r, " element ", b / es,
                             " differs");
    }
  }
  return Status();
}

}  // namespace loom::sched
