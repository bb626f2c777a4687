/* Minimal loom program: every rank all-reduces a vector and checks the result.
 * MPI is used only to share the unique id (MPI_Bcast), as with NCCL.
 *   mpirun -np 4 ./mpi_allreduce [count]
 * (as root add --allow-run-as-root --oversubscribe) */
#include <loom/loom.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                   \
  do {                                                                                \
    loomResult_t r = (call);                                                          \
    if (r != loomSuccess) {                                                           \
      fprintf(stderr, "%s failed: %s (%s)\n", #call, loomGetErrorString(r),           \
              loomGetLastError(NULL));                                                \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                   \
    }                                                                                 \
  } while (0)

int main(int argc, char** argv) {
  int rank, nranks;
  size_t count = argc > 1 ? (size_t)strtoull(argv[1], NULL, 0) : 1000000;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  loomUniqueId id;
  if (rank == 0) CHECK(loomGetUniqueId(&id));
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
  loomComm_t comm;
  CHECK(loomCommInitRank(&comm, nranks, id, rank));

  float* send = malloc(count * sizeof(float));
  float* recv = malloc(count * sizeof(float));
  for (size_t i = 0; i < count; ++i) send[i] = (float)(rank + 1);
  CHECK(loomAllReduce(send, recv, count, loomFloat32, loomSum, comm, NULL));

  long wrong = 0;
  float want = (float)nranks * (nranks + 1) / 2;
  for (size_t i = 0; i < count; ++i) wrong += recv[i] != want;
  printf("rank %d/%d: allreduce of %zu floats: %s (expected %g everywhere, %ld wrong)\n", rank,
         nranks, count, wrong ? "WRONG" : "ok", want, wrong);

  CHECK(loomCommDestroy(comm));
  free(send);
  free(recv);
  MPI_Finalize();
  return wrong ? 1 : 0;
}
