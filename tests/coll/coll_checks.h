// Checks of each collective through the public API with exactly known results; each returns ""
// or a description of the first wrong element or failed call.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "loom/loom.h"

namespace loom::testing {

std::string allReduce(loomComm_t comm, int rank, int p, uint64_t n, loomDataType_t dt,
                      loomRedOp_t op, bool inPlace);
std::string broadcast(loomComm_t comm, int rank, int p, uint64_t n, bool inPlace);
std::string reduce(loomComm_t comm, int rank, int p, uint64_t n, bool inPlace);
std::string allGather(loomComm_t comm, int rank, int p, uint64_t n, bool inPlace);
std::string reduceScatter(loomComm_t comm, int rank, int p, uint64_t n, bool inPlace);
std::string allToAll(loomComm_t comm, int rank, int p, uint64_t n);
std::string sendRecvRing(loomComm_t comm, int rank, int p, uint64_t n);
std::string streamAndGroup(loomComm_t comm, int rank, int p, uint64_t n);
// Every check above, for each count in `counts`, in place and out of place, several dtype x op.
std::string everyCollective(loomComm_t comm, int rank, int p,
                            std::initializer_list<uint64_t> counts);

}  // namespace loom::testing

#define LOOM_TRY(call)                                                                             \
  do {                                                                                             \
    loomResult_t r_ = (call);                                                                      \
    if (r_ != loomSuccess)                                                                         \
      return std::string(#call) + " -> " + loomGetErrorString(r_) + ": " + loomGetLastError(comm); \
  } while (0)
