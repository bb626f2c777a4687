/*
 * loom: collective communication that knows the network.
 *
 * C99 public API, shaped like nccl.h. Every call returns a loomResult_t; the detailed message of
 * the last failure on a communicator is readable with loomGetLastError(comm).
 */
#ifndef LOOM_LOOM_H_
#define LOOM_LOOM_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LOOM_MAJOR 0
#define LOOM_MINOR 1
#define LOOM_PATCH 0
#define LOOM_VERSION_CODE (LOOM_MAJOR * 10000 + LOOM_MINOR * 100 + LOOM_PATCH)

typedef enum {
  loomSuccess = 0,
  loomSystemError = 2,
  loomInternalError = 3,
  loomInvalidArgument = 4,
  loomInvalidUsage = 5,
  loomRemoteError = 6,
  loomInProgress = 7,
  loomTimeout = 8,
  /* The communicator was revoked (loomCommRevoke on any rank, or a peer failed): every pending and
   * later operation on it returns this. Shrink it (loomCommShrink) or destroy it. */
  loomCommRevoked = 9,
  loomNumResults = 10
} loomResult_t;

/* Same numbering as ncclDataType_t. */
typedef enum {
  loomInt8 = 0,
  loomChar = 0,
  loomUint8 = 1,
  loomInt32 = 2,
  loomInt = 2,
  loomUint32 = 3,
  loomInt64 = 4,
  loomUint64 = 5,
  loomFloat16 = 6,
  loomHalf = 6,
  loomFloat32 = 7,
  loomFloat = 7,
  loomFloat64 = 8,
  loomDouble = 8,
  loomBfloat16 = 9,
  loomNumTypes = 10
} loomDataType_t;

/* Same numbering as ncclRedOp_t. Avg = sum then divide by the rank count (integers truncate). */
typedef enum {
  loomSum = 0,
  loomProd = 1,
  loomMax = 2,
  loomMin = 3,
  loomAvg = 4,
  loomNumOps = 5
} loomRedOp_t;

#define LOOM_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[LOOM_UNIQUE_ID_BYTES];
} loomUniqueId;

typedef struct loomComm* loomComm_t;
typedef struct loomStream* loomStream_t;

/* Config: the first field is the struct's size so it can grow. Initialise with
 * LOOM_CONFIG_INITIALIZER; fields left at their "unset" value take the environment/defaults. */
typedef struct {
  size_t size;        /* sizeof(loomConfig_t) */
  unsigned int magic; /* LOOM_CONFIG_MAGIC */
  int blocking;       /* 1 (default): init returns when ready. 0: init may return loomInProgress */
  int64_t timeoutMs;  /* per-communicator deadline for every wait; <= 0: LOOM_TIMEOUT_MS */
  const char* transport; /* "shm", "tcp", "ucx" or NULL (auto / LOOM_TRANSPORT) */
  const char* commName;  /* name shown in logs; may be NULL */
} loomConfig_t;

#define LOOM_CONFIG_MAGIC 0x6c6f6f6du
#define LOOM_CONFIG_INITIALIZER \
  { sizeof(loomConfig_t), LOOM_CONFIG_MAGIC, 1, 0, NULL, NULL }

#define LOOM_SPLIT_NOCOLOR (-1)

/* Version and errors. */
loomResult_t loomGetVersion(int* version);
const char* loomGetErrorString(loomResult_t result);
/* Last detailed error message on comm (or of the calling thread when comm is NULL). */
const char* loomGetLastError(loomComm_t comm);

/* Communicators. */
loomResult_t loomGetUniqueId(loomUniqueId* uniqueId);
/* Writes the id as a printable string (2*LOOM_UNIQUE_ID_BYTES+1 chars) and parses it back, so a
 * launcher can pass it in an environment variable or a file. */
loomResult_t loomUniqueIdToString(const loomUniqueId* uniqueId, char* out, size_t outBytes);
loomResult_t loomUniqueIdFromString(const char* text, loomUniqueId* uniqueId);
loomResult_t loomCommInitRank(loomComm_t* comm, int nranks, loomUniqueId commId, int rank);
loomResult_t loomCommInitRankConfig(loomComm_t* comm, int nranks, loomUniqueId commId, int rank,
                                    const loomConfig_t* config);
/* Launcher entry point: reads LOOM_COMM_ID (id string, or @path of a file holding it),
 * LOOM_RANK and LOOM_NRANKS (or OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/PMI_SIZE). */
loomResult_t loomCommInitFromEnv(loomComm_t* comm);
loomResult_t loomCommSplit(loomComm_t comm, int color, int key, loomComm_t* newcomm,
                           const loomConfig_t* config);
loomResult_t loomCommDestroy(loomComm_t comm);
loomResult_t loomCommAbort(loomComm_t comm);
loomResult_t loomCommCount(const loomComm_t comm, int* count);
loomResult_t loomCommUserRank(const loomComm_t comm, int* rank);
/* loomSuccess, or the error that ended the communicator: loomRemoteError once a peer failed (its
 * message, loomGetLastError, names the failed ranks), loomCommRevoked once revoked, loomTimeout. */
loomResult_t loomCommGetAsyncError(loomComm_t comm, loomResult_t* asyncError);

/* Surviving failures (docs/failures.md). Each communicator of more than one rank runs a heartbeat
 * over the control path (LOOM_HEARTBEAT_MS, LOOM_HEARTBEAT_TIMEOUT_MS): a peer that is killed,
 * stopped or hung, or cut off by a partition, is declared failed within LOOM_HEARTBEAT_TIMEOUT_MS
 * plus one interval (under 2 s by default), and the communicator is then revoked on every rank.
 *
 * loomCommRevoke: every pending and later operation on comm, on every rank, returns promptly
 * (loomCommRevoked, or loomRemoteError naming the failed ranks when a failure caused it). Local
 * and non-blocking; the other ranks hear of it within milliseconds. Idempotent. */
loomResult_t loomCommRevoke(loomComm_t comm);
/* Ranks this rank holds failed or gone (destroyed their communicator), ascending: up to capacity
 * of them are written to ranks, and *nfailed gets how many there are. Local: this rank's current
 * view, which the ranks' views converge to within one heartbeat. A rank that the others excluded
 * lists itself. ranks may be NULL when capacity is 0. */
loomResult_t loomCommGetFailedRanks(loomComm_t comm, int* ranks, int capacity, int* nfailed);
/* The agreement step: collective over the survivors; every survivor returns the same set (written
 * as for loomCommGetFailedRanks). loomCommRevoked on a rank the others excluded. */
loomResult_t loomCommAgreeFailedRanks(loomComm_t comm, int* ranks, int capacity, int* nfailed);
/* A communicator of every rank of comm but excludeRanks[0..nexclude) (nexclude 0: but the failed
 * ones, agreed as by loomCommAgreeFailedRanks), ranks renumbered in their old order. Collective
 * over the remaining ranks, which pass the same list; comm may be revoked. Built from the
 * connections and identities comm holds (no rendezvous root, no new unique id); the planner plans
 * afresh for the ranks and hosts that are left. The new communicator inherits comm's configuration;
 * comm stays valid until destroyed. A rank may not exclude itself (loomInvalidArgument). */
loomResult_t loomCommShrink(loomComm_t comm, const int* excludeRanks, int nexclude,
                            loomComm_t* newcomm);
/* Growing: the ranks of comm and newcomers form a communicator of newSize ranks. Rank 0 of comm
 * makes an id (loomGetUniqueId) and publishes it to the newcomers (a file, a key-value store);
 * every rank of comm calls loomCommGrow (growId is read on rank 0 only; others may pass NULL) and
 * keeps its rank; each newcomer calls loomCommInitRank(&c, newSize, id, r) with r in
 * [size of comm, newSize). comm stays valid. */
loomResult_t loomCommGrow(loomComm_t comm, int newSize, const loomUniqueId* growId,
                          loomComm_t* newcomm);

/* Streams: in-order queues run by the library. A NULL stream means "complete before returning". */
loomResult_t loomStreamCreate(loomStream_t* stream);
/* loomSuccess when all work is done, loomInProgress while some is pending, or the first error. */
loomResult_t loomStreamQuery(loomStream_t stream);
/* Waits up to timeoutMs (< 0: forever) for all queued work. */
loomResult_t loomStreamSynchronize(loomStream_t stream, int64_t timeoutMs);
loomResult_t loomStreamDestroy(loomStream_t stream);
/* A loom stream ordered with a CUDA stream (cudaStream_t / CUstream; NULL: the legacy default
 * stream), as NCCL's collectives are: each operation queued on it starts after the GPU work queued
 * on cudaStream before the call, and GPU work queued on cudaStream after the call waits for the
 * operation, without blocking the calling thread. Call it with the stream's CUDA context current
 * (for example after cudaSetDevice). loomInvalidUsage without a CUDA driver. docs/gpu.md. */
loomResult_t loomStreamCreateForCuda(loomStream_t* stream, void* cudaStream);
/* Host callback on a stream: fn(userData, status) runs on the stream's thread after all work queued
 * before it; status is loomSuccess, or the first error of that earlier work (its message:
 * loomGetLastError(comm)). fn must not block on later work of the same stream. */
typedef void (*loomHostFn_t)(void* userData, loomResult_t status);
loomResult_t loomStreamLaunchHostFunc(loomStream_t stream, loomHostFn_t fn, void* userData);

/* Collectives. In place when sendbuff == recvbuff (allgather: sendbuff == recvbuff + rank*count;
 * reducescatter: recvbuff == sendbuff + rank*recvcount), as in NCCL. */
loomResult_t loomAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           loomDataType_t datatype, loomRedOp_t op, loomComm_t comm,
                           loomStream_t stream);
loomResult_t loomBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           loomDataType_t datatype, int root, loomComm_t comm, loomStream_t stream);
loomResult_t loomReduce(const void* sendbuff, void* recvbuff, size_t count, loomDataType_t datatype,
                        loomRedOp_t op, int root, loomComm_t comm, loomStream_t stream);
/* sendcount elements per rank; recvbuff holds nranks*sendcount. */
loomResult_t loomAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           loomDataType_t datatype, loomComm_t comm, loomStream_t stream);
/* sendbuff holds nranks*recvcount; recvbuff recvcount. */
loomResult_t loomReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               loomDataType_t datatype, loomRedOp_t op, loomComm_t comm,
                               loomStream_t stream);
/* count elements to each rank; both buffers hold nranks*count. */
loomResult_t loomAllToAll(const void* sendbuff, void* recvbuff, size_t count,
                          loomDataType_t datatype, loomComm_t comm, loomStream_t stream);
/* Root receives sendcount elements from every rank into recvbuff (nranks*sendcount, rank order);
 * recvbuff is not used on other ranks. In place at the root when sendbuff == recvbuff +
 * root*sendcount. */
loomResult_t loomGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                        loomDataType_t datatype, int root, loomComm_t comm, loomStream_t stream);
/* Root sends block i of sendbuff (nranks*recvcount) to rank i's recvbuff (recvcount); sendbuff is
 * not used on other ranks. In place at the root when recvbuff == sendbuff + root*recvcount. */
loomResult_t loomScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                         loomDataType_t datatype, int root, loomComm_t comm, loomStream_t stream);
/* All-to-all with a count and displacement (in elements) per peer, as MPI_Alltoallv: block i of
 * sendbuff (sdispls[i], sendcounts[i]) goes to rank i, which stores it at its rdispls[me]. Each
 * array has nranks entries; sendcounts[i] on this rank must equal recvcounts[me] on rank i. Not in
 * place: the buffers must not overlap. */
loomResult_t loomAllToAllv(const void* sendbuff, const size_t sendcounts[], const size_t sdispls[],
                           void* recvbuff, const size_t recvcounts[], const size_t rdispls[],
                           loomDataType_t datatype, loomComm_t comm, loomStream_t stream);
loomResult_t loomSend(const void* sendbuff, size_t count, loomDataType_t datatype, int peer,
                      loomComm_t comm, loomStream_t stream);
loomResult_t loomRecv(void* recvbuff, size_t count, loomDataType_t datatype, int peer,
                      loomComm_t comm, loomStream_t stream);
loomResult_t loomBarrier(loomComm_t comm, loomStream_t stream);

/* Calls between GroupStart and GroupEnd (same thread) are issued as one operation at GroupEnd. */
loomResult_t loomGroupStart(void);
loomResult_t loomGroupEnd(void);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_LOOM_H_ */
