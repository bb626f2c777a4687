// One rank's part of a perf run: make the backend, sweep sizes x types x ops, time, check, report.
#pragma once

#include "perf_args.h"
#include "perf_colls.h"
#include "perf_coord.h"

namespace loom::perf {

// Returns the rank's exit status: 0 when everything ran and every element was right, 1 when any
// element was wrong, 2 or 3 when the run could not start or a call failed.
int runRank(const Options& opts, const CollInfo& coll, Coord& coord);

// The driver's main(): parses flags, then runs under mpirun, forked (--ranks), or as one rank.
// collName is the collective this binary runs ("all_reduce"); --coll overrides it.
int driverMain(int argc, char** argv, const char* collName);

}  // namespace loom::perf
