/* Checks loom against Open MPI on random integer data: every collective loom and MPI both have,
 * run by both on the same inputs, must give identical bytes. Only the public header is used.
 *   mpirun -np 5 ./mpi_compare [count]      (LOOM_TRANSPORT=shm|tcp to force a transport)
 * Prints one line per collective on rank 0 and exits non-zero on any difference. */
#include <loom/loom.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;

#define CHECK(call)                                                                          \
  do {                                                                                       \
    loomResult_t r = (call);                                                                 \
    if (r != loomSuccess) {                                                                  \
      fprintf(stderr, "rank %d: %s failed: %s\n", rank, #call, loomGetLastError(NULL));      \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                          \
    }                                                                                        \
  } while (0)

static int report(const char* what, const void* a, const void* b, size_t bytes) {
  int bad = memcmp(a, b, bytes) != 0, anyBad = 0;
  MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) printf("%-28s %s\n", what, anyBad ? "DIFFERENT from MPI" : "identical to MPI");
  return anyBad;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 0) : 100003;
  loomUniqueId id;
  if (rank == 0) CHECK(loomGetUniqueId(&id));
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
  loomComm_t comm;
  CHECK(loomCommInitRank(&comm, nranks, id, rank));

  size_t big = n * (size_t)nranks;
  int32_t* in = malloc(big * sizeof(int32_t));
  int32_t* a = malloc(big * sizeof(int32_t));
  int32_t* b = malloc(big * sizeof(int32_t));
  srand(1234 + 7 * rank);
  for (size_t i = 0; i < big; ++i) in[i] = (rand() % 2001) - 1000; /* sums cannot overflow */
  int bad = 0;

  const struct { loomRedOp_t l; MPI_Op m; const char* name; } ops[] = {
      {loomSum, MPI_SUM, "allreduce int32 sum"},
      {loomMax, MPI_MAX, "allreduce int32 max"},
      {loomMin, MPI_MIN, "allreduce int32 min"}};
  for (int k = 0; k < 3; ++k) {
    CHECK(loomAllReduce(in, a, n, loomInt32, ops[k].l, comm, NULL));
    MPI_Allreduce(in, b, (int)n, MPI_INT32_T, ops[k].m, MPI_COMM_WORLD);
    bad |= report(ops[k].name, a, b, n * 4);
  }
  CHECK(loomAllGather(in, a, n, loomInt32, comm, NULL));
  MPI_Allgather(in, (int)n, MPI_INT32_T, b, (int)n, MPI_INT32_T, MPI_COMM_WORLD);
  bad |= report("allgather int32", a, b, big * 4);

  CHECK(loomReduceScatter(in, a, n, loomInt32, loomSum, comm, NULL));
  MPI_Reduce_scatter_block(in, b, (int)n, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
  bad |= report("reducescatter int32 sum", a, b, n * 4);

  int root = nranks - 1;
  memcpy(a, in, n * 4);
  memcpy(b, in, n * 4);
  CHECK(loomBroadcast(a, a, n, loomInt32, root, comm, NULL));
  MPI_Bcast(b, (int)n, MPI_INT32_T, root, MPI_COMM_WORLD);
  bad |= report("broadcast int32", a, b, n * 4);

  memset(a, 0, n * 4);
  memset(b, 0, n * 4);
  CHECK(loomReduce(in, a, n, loomInt32, loomSum, root, comm, NULL));
  MPI_Reduce(in, b, (int)n, MPI_INT32_T, MPI_SUM, root, MPI_COMM_WORLD);
  bad |= report("reduce int32 sum", a, b, n * 4);

  size_t per = n / (size_t)nranks + 1;
  CHECK(loomAllToAll(in, a, per, loomInt32, comm, NULL));
  MPI_Alltoall(in, (int)per, MPI_INT32_T, b, (int)per, MPI_INT32_T, MPI_COMM_WORLD);
  bad |= report("alltoall int32", a, b, per * nranks * 4);

  CHECK(loomCommDestroy(comm));
  free(in);
  free(a);
  free(b);
  MPI_Finalize();
  return bad ? 1 : 0;
}
