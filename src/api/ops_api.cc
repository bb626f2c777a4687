// C API: collectives, point-to-point and groups. Every argument is checked here; the operation then
// runs now (NULL stream), is queued on a loomStream_t, or is held until loomGroupEnd.
#include <algorithm>
#include <limits>

#include "api/comm.h"
#include "api/device_staging.h"
#include "api/stream.h"

using loom::Status;
using loom::api::fail;
using loom::api::OpDesc;
using loom::sched::CollType;

namespace {

struct Pending {
  loomComm* comm;
  OpDesc op;
  loomStream* stream;
};
thread_local int tGroupDepth = 0;
thread_local std::vector<Pending> tGroup;

bool overlaps(const void* a, uint64_t an, const void* b, uint64_t bn) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return an > 0 && bn > 0 && x < y + bn && y < x + an;
}

// Byte sizes of the send and receive buffers of op on a communicator of p ranks.
Status sizes(const OpDesc& o, int p, uint64_t* sendBytes, uint64_t* recvBytes) {
  const uint64_t es = loom::dtypeSize(o.dtype);
  uint64_t mult = 1;
  if (o.coll == CollType::kAllGather || o.coll == CollType::kReduceScatter ||
      o.coll == CollType::kAllToAll || o.coll == CollType::kGather || o.coll == CollType::kScatter)
    mult = static_cast<uint64_t>(p);
  if (o.count > std::numeric_limits<uint64_t>::max() / es / mult ||
      o.count * es * mult > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return loom::invalidArgument("count ", o.count, " * sizeof(", loom::dtypeName(o.dtype), ")",
                                 mult > 1 ? " * nranks" : "", " overflows");
  const uint64_t one = o.count * es, all = one * mult;
  *sendBytes = o.coll == CollType::kReduceScatter || o.coll == CollType::kAllToAll ||
                       o.coll == CollType::kScatter
                   ? all
                   : one;
  *recvBytes =
      o.coll == CollType::kAllGather || o.coll == CollType::kAllToAll || o.coll == CollType::kGather
          ? all
          : one;
  return Status();
}

Status check(loomComm* c, OpDesc* o, int rawDtype, int rawOp) {
  LOOM_CHECK(loom::api::usableComm(c));
  if (!loom::validDataType(rawDtype))
    return loom::invalidArgument("datatype ", rawDtype, " is not a loomDataType_t");
  if (!loom::validRedOp(rawOp)) return loom::invalidArgument("op ", rawOp, " is not a loomRedOp_t");
  o->dtype = static_cast<loom::DataType>(rawDtype);
  o->op = static_cast<loom::RedOp>(rawOp);
  const int p = c->nranks, r = c->rank;
  if ((o->coll == CollType::kBroadcast || o->coll == CollType::kReduce ||
       o->coll == CollType::kGather || o->coll == CollType::kScatter) &&
      (o->root < 0 || o->root >= p))
    return loom::invalidArgument("root ", o->root, " is outside [0, ", p, ")");
  if (o->coll == CollType::kSend || o->coll == CollType::kRecv) {
    if (o->peer < 0 || o->peer >= p)
      return loom::invalidArgument("peer ", o->peer, " is outside [0, ", p, ")");
    if (o->peer == r)
      return loom::invalidArgument("peer ", o->peer,
                                   " is this rank (send/recv to self is not supported)");
  }
  uint64_t sb = 0, rb = 0;
  LOOM_CHECK(sizes(*o, p, &sb, &rb));
  const uint64_t es = loom::dtypeSize(o->dtype);
  bool needSend =
      o->coll != CollType::kRecv && o->coll != CollType::kBarrier &&
      !((o->coll == CollType::kBroadcast || o->coll == CollType::kScatter) && r != o->root);
  bool needRecv = o->coll != CollType::kSend && o->coll != CollType::kBarrier &&
                  !((o->coll == CollType::kReduce || o->coll == CollType::kGather) && r != o->root);
  if (o->count > 0 && needSend && o->send == nullptr)
    return loom::invalidArgument("sendbuff is NULL");
  if (o->count > 0 && needRecv && o->recv == nullptr)
    return loom::invalidArgument("recvbuff is NULL");
  // In place as in NCCL; any other overlap of the two buffers is an error.
  const auto* sp = static_cast<const uint8_t*>(o->send);
  auto* rp = static_cast<uint8_t*>(o->recv);
  switch (o->coll) {
    case CollType::kAllGather:
      o->inPlace = sp == rp + r * o->count * es;
      break;
    case CollType::kReduceScatter:
      o->inPlace = rp == sp + r * o->count * es;
      break;
    case CollType::kGather:
      o->inPlace = r == o->root && sp == rp + r * o->count * es;
      break;
    case CollType::kScatter:
      o->inPlace = r == o->root && rp == sp + r * o->count * es;
      break;
    case CollType::kAllReduce:
    case CollType::kBroadcast:
    case CollType::kReduce:
      o->inPlace = sp == rp;
      break;
    default:
      o->inPlace = false;
  }
  if (o->inPlace && o->count == 0) o->inPlace = false;
  if (needSend && needRecv && !o->inPlace && overlaps(sp, sb, rp, rb))
    return loom::invalidArgument(
        "sendbuff and recvbuff overlap but are not in place (", loom::sched::collName(o->coll),
        " in place needs ",
        o->coll == CollType::kAllGather       ? "sendbuff == recvbuff + rank*count*size"
        : o->coll == CollType::kGather        ? "sendbuff == recvbuff + root*count*size"
        : o->coll == CollType::kScatter       ? "recvbuff == sendbuff + root*count*size"
        : o->coll == CollType::kReduceScatter ? "recvbuff == sendbuff + rank*recvcount*size"
        : o->coll == CollType::kAllToAll      ? "no overlap: in-place all-to-all is not supported"
                                              : "sendbuff == recvbuff",
        ")");
  loom::api::stageIfDevice(o, needSend ? sb : 0, needRecv ? rb : 0);
  return Status();
}

OpDesc makeOp(CollType coll, const void* send, void* recv, size_t count, int root = 0,
              int peer = -1) {
  OpDesc o;
  o.coll = coll;
  o.send = send;
  o.recv = recv;
  o.count = count;
  o.root = root;
  o.peer = peer;
  return o;
}

// Runs ops on c now (NULL stream) or queues them on stream. The communicator counts them as in
// flight until they finish, so destroy/abort wait for them.
loomResult_t submit(loomComm* c, std::vector<OpDesc> ops, loomStream* stream) {
  c->inFlight++;
  if (stream == nullptr) {
    Status s = loom::api::runOps(c, ops);
    c->inFlight--;
    return fail(c, s);
  }
  loom::api::streamEnqueue(stream, [c, ops = std::move(ops)] {
    Status st = loom::api::runOps(c, ops);
    if (!st.ok()) fail(c, st);
    c->inFlight--;
    return st;
  });
  return loomSuccess;
}

// Queues a checked operation in the open group, on `stream`, or runs it now.
loomResult_t dispatch(loomComm* c, OpDesc o, loomStream* stream) {
  if (stream != nullptr && !loom::api::isLiveStream(stream))
    return fail(c, loom::invalidArgument("stream is not a live loomStream_t (or NULL)"));
  if (tGroupDepth > 0) {
    tGroup.push_back({c, o, stream});
    return loomSuccess;
  }
  if (stream == nullptr) {  // the common blocking call: no vector, no queue
    c->inFlight++;
    Status r = loom::api::runOp(c, o);
    c->inFlight--;
    return fail(c, r);
  }
  return submit(c, {o}, stream);
}

loomResult_t issue(loomComm* c, OpDesc o, int rawDtype, int rawOp, loomStream* stream) {
  Status s = check(c, &o, rawDtype, rawOp);
  if (!s.ok()) return fail(c, s);
  return dispatch(c, std::move(o), stream);
}

// End (in elements) of the blocks described by counts/displs; checks the arrays and overflow.
Status extent(const size_t* counts, const size_t* displs, const char* countsName,
              const char* displsName, int p, uint64_t es, uint64_t* end) {
  if (counts == nullptr) return loom::invalidArgument(countsName, " is NULL");
  if (displs == nullptr) return loom::invalidArgument(displsName, " is NULL");
  const uint64_t maxElems = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / es;
  *end = 0;
  for (int i = 0; i < p; ++i) {
    if (counts[i] > maxElems || displs[i] > maxElems - counts[i])
      return loom::invalidArgument(displsName, "[", i, "] + ", countsName, "[", i,
                                   "] overflows the buffer size");
    if (counts[i] > 0) *end = std::max<uint64_t>(*end, displs[i] + counts[i]);
  }
  return Status();
}

Status checkAllToAllv(loomComm* c, OpDesc* o, int rawDtype, const size_t* sc, const size_t* sd,
                      const size_t* rc, const size_t* rd) {
  LOOM_CHECK(loom::api::usableComm(c));
  if (!loom::validDataType(rawDtype))
    return loom::invalidArgument("datatype ", rawDtype, " is not a loomDataType_t");
  o->dtype = static_cast<loom::DataType>(rawDtype);
  const int p = c->nranks;
  const uint64_t es = loom::dtypeSize(o->dtype);
  uint64_t sendEnd = 0, recvEnd = 0;
  LOOM_CHECK(extent(sc, sd, "sendcounts", "sdispls", p, es, &sendEnd));
  LOOM_CHECK(extent(rc, rd, "recvcounts", "rdispls", p, es, &recvEnd));
  if (sc[c->rank] != rc[c->rank])
    return loom::invalidArgument("sendcounts[", c->rank, "] = ", sc[c->rank],
                                 " differs from recvcounts[", c->rank, "] = ", rc[c->rank],
                                 " (this rank's own block)");
  if (sendEnd > 0 && o->send == nullptr) return loom::invalidArgument("sendbuff is NULL");
  if (recvEnd > 0 && o->recv == nullptr) return loom::invalidArgument("recvbuff is NULL");
  if (overlaps(o->send, sendEnd * es, o->recv, recvEnd * es))
    return loom::invalidArgument(
        "sendbuff and recvbuff overlap (in-place all-to-all-v is not supported)");
  auto v = std::make_shared<std::vector<uint64_t>>(4 * p);
  for (int i = 0; i < p; ++i) {
    (*v)[i] = sc[i];
    (*v)[p + i] = sd[i];
    (*v)[2 * p + i] = rc[i];
    (*v)[3 * p + i] = rd[i];
  }
  o->vcounts = std::move(v);
  o->count = std::max(sendEnd, recvEnd);
  loom::api::stageIfDevice(o, sendEnd * es, recvEnd * es);
  return Status();
}

}  // namespace

extern "C" {

loomResult_t loomAllReduce(const void* sendbuff, void* recvbuff, size_t count, loomDataType_t dt,
                           loomRedOp_t op, loomComm_t comm, loomStream_t stream) {
  return issue(comm, makeOp(CollType::kAllReduce, sendbuff, recvbuff, count), dt, op, stream);
}

loomResult_t loomBroadcast(const void* sendbuff, void* recvbuff, size_t count, loomDataType_t dt,
                           int root, loomComm_t comm, loomStream_t stream) {
  return issue(comm, makeOp(CollType::kBroadcast, sendbuff, recvbuff, count, root), dt, loomSum,
               stream);
}

loomResult_t loomReduce(const void* sendbuff, void* recvbuff, size_t count, loomDataType_t dt,
                        loomRedOp_t op, int root, loomComm_t comm, loomStream_t stream) {
  return issue(comm, makeOp(CollType::kReduce, sendbuff, recvbuff, count, root), dt, op, stream);
}

loomResult_t loomAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           loomDataType_t dt, loomComm_t comm, loomStream_t stream) {
  return issue(comm, makeOp(CollType::kAllGather, sendbuff, recvbuff, sendcount), dt, loomSum,
               stream);
}

loomResult_t loomReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               loomDataType_t dt, loomRedOp_t op, loomComm_t comm,
                               loomStream_t stream) {
  return issue(comm, makeOp(CollType::kReduceScatter, sendbuff, recvbuff, recvcount), dt, op,
               stream);
}

loomResult_t loomAllToAll(const void* sendbuff, void* recvbuff, size_t count, loomDataType_t dt,
                          loomComm_t comm, loomStream_t stream) {
  return issue(comm, makeOp(CollType::kAllToAll, sendbuff, recvbuff, count), dt, loomSum, stream);
}

loomResult_t loomGather(const void* sendbuff, void* recvbuff, size_t sendcount, loomDataType_t dt,
                        int root, loomComm_t comm, loomStream_t stream) {
  return issue(comm, makeOp(CollType::kGather, sendbuff, recvbuff, sendcount, root), dt, loomSum,
               stream);
}

loomResult_t loomScatter(const void* sendbuff, void* recvbuff, size_t recvcount, loomDataType_t dt,
                         int root, loomComm_t comm, loomStream_t stream) {
  return issue(comm, makeOp(CollType::kScatter, sendbuff, recvbuff, recvcount, root), dt, loomSum,
               stream);
}

loomResult_t loomAllToAllv(const void* sendbuff, const size_t sendcounts[], const size_t sdispls[],
                           void* recvbuff, const size_t recvcounts[], const size_t rdispls[],
                           loomDataType_t dt, loomComm_t comm, loomStream_t stream) {
  OpDesc o = makeOp(CollType::kAllToAllv, sendbuff, recvbuff, 0);
  Status s = checkAllToAllv(comm, &o, dt, sendcounts, sdispls, recvcounts, rdispls);
  if (!s.ok()) return fail(comm, s);
  return dispatch(comm, std::move(o), stream);
}

loomResult_t loomSend(const void* sendbuff, size_t count, loomDataType_t dt, int peer,
                      loomComm_t comm, loomStream_t stream) {
  return issue(comm, makeOp(CollType::kSend, sendbuff, nullptr, count, 0, peer), dt, loomSum,
               stream);
}

loomResult_t loomRecv(void* recvbuff, size_t count, loomDataType_t dt, int peer, loomComm_t comm,
                      loomStream_t stream) {
  return issue(comm, makeOp(CollType::kRecv, nullptr, recvbuff, count, 0, peer), dt, loomSum,
               stream);
}

loomResult_t loomBarrier(loomComm_t comm, loomStream_t stream) {
  return issue(comm, makeOp(CollType::kBarrier, nullptr, nullptr, 0), loomUint8, loomSum, stream);
}

loomResult_t loomGroupStart(void) {
  ++tGroupDepth;
  return loomSuccess;
}

loomResult_t loomGroupEnd(void) {
  if (tGroupDepth == 0)
    return fail(nullptr, loom::invalidUsage("loomGroupEnd without loomGroupStart"));
  if (--tGroupDepth > 0) return loomSuccess;
  std::vector<Pending> ops;
  ops.swap(tGroup);
  // One merged run per communicator, in order of first appearance.
  loomResult_t result = loomSuccess;
  std::vector<bool> taken(ops.size(), false);
  for (size_t i = 0; i < ops.size(); ++i) {
    if (taken[i]) continue;
    loomComm* c = ops[i].comm;
    loomStream* stream = ops[i].stream;
    std::vector<OpDesc> mine;
    for (size_t j = i; j < ops.size(); ++j) {
      if (ops[j].comm != c) continue;
      if (ops[j].stream != stream)
        return fail(
            c, loom::invalidUsage("operations on one communicator in a group must use one stream"));
      mine.push_back(ops[j].op);
      taken[j] = true;
    }
    if (!loom::api::isLiveComm(c))
      return fail(nullptr, loom::invalidUsage("comm destroyed inside a group"));
    loomResult_t r = submit(c, std::move(mine), stream);
    if (result == loomSuccess) result = r;
  }
  return result;
}

}  // extern "C"
