// Entry point of one perf driver; LOOM_PERF_COLL names its collective ("all_reduce").
#include "perf_sweep.h"

int main(int argc, char** argv) { return loom::perf::driverMain(argc, argv, LOOM_PERF_COLL); }
