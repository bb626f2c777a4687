// Analytic round patterns: the rounds of an algorithm's schedules without building them, for
// communicators too large to materialise every rank's Schedule (16,384 ranks). Each pattern
// follows its builder in src/algo (same peers, same byte counts per message, pipelining by the
// same chunk rule) but merges identical rounds into one with a repeat count; tests compare it with
// roundsFromSchedules on small communicators.
#pragma once

#include <string>
#include <vector>

#include "plan/cost_model.h"
#include "sched/schedule.h"

namespace loom::plan {

struct PatternArgs {
  sched::CollArgs args;
  int nranks = 1;
  std::vector<int> order;  // position -> rank (ring / tree / butterfly positions); empty: identity
  std::vector<int> parts;  // rank -> part id for hierarchical algorithms (empty: one per rank)
};

// False when there is no pattern for (coll, algo).
bool hasPattern(sched::CollType coll, const std::string& algo);
Status patternRounds(const std::string& algo, const PatternArgs& pa, std::vector<Round>* out);

}  // namespace loom::plan
