/* A user program built against the installed loom only. */
#include <loom/loom.h>
#include <stdio.h>

int main(void) {
  loomUniqueId id;
  loomComm_t comm;
  float x = 2, y = 0;
  if (loomGetUniqueId(&id) != loomSuccess || loomCommInitRank(&comm, 1, id, 0) != loomSuccess) return 1;
  if (loomAllReduce(&x, &y, 1, loomFloat32, loomSum, comm, NULL) != loomSuccess) return 2;
  loomCommDestroy(comm);
  printf("consumer ok\n");
  return y == 2 ? 0 : 3;
}
