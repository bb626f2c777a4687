// loom-plan --calibrate: measures this machine's shared-memory and TCP paths through loom itself
// (two forked ranks, forced recursive doubling at 8 B and 4 MiB) and the local reduction rate.
#pragma once

#include "core/status.h"
#include "plan/cost_model.h"

namespace loomplan {
loom::Status calibrate(loom::plan::CostParams* out);
}
