// The launcher-less join of the namespace programs (multihost_rank, perf/fabric-emu's
// emu_allreduce): rank 0 makes the unique id and writes it to `path` (atomically, by rename), the
// others wait up to 30 s for the file; then everyone points LOOM_COMM_ID at it, so that
// loomCommInitFromEnv (LOOM_RANK, LOOM_NRANKS) joins the same communicator.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "loom/loom.h"

inline loomResult_t shareUniqueIdFile(int rank, const char* path) {
  if (rank == 0) {
    loomUniqueId id;
    char text[2 * LOOM_UNIQUE_ID_BYTES + 1];
    loomResult_t r = loomGetUniqueId(&id);
    if (r == loomSuccess) r = loomUniqueIdToString(&id, text, sizeof(text));
    if (r != loomSuccess) return r;
    const std::string tmp = std::string(path) + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f) return loomSystemError;
    std::fputs(text, f);
    if (std::fclose(f) != 0 || std::rename(tmp.c_str(), path) != 0) return loomSystemError;
  } else {
    for (int i = 0; i < 3000 && access(path, R_OK) != 0; ++i) usleep(10000);
  }
  setenv("LOOM_COMM_ID", (std::string("@") + path).c_str(), 1);
  return loomSuccess;
}
