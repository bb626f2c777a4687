// Folding symmetric ranks into classes (SimOptions::fold): ranks whose schedules have the same
// skeleton (the same steps up to the peer each send or receive slot talks to: a host's GPUs in a
// ring inside the host differ in the delta to the next GPU only), whose peers per slot are in the
// same classes and answer through the same slot, and whose paths have the same latency form a
// class; a class runs as one unit (its representative's schedule; a message to a member of another
// class pairs with the step that member has, the same step number in every member) and its k
// messages of a step as one flow of multiplicity k. Links fold
// too: links that every class path crosses with the same weight (and that have the same capacity)
// form a link class, solved as one link. The folded max-min problem is then the exact one
// restricted to states where all members of a class and all links of a link class are alike, and
// progressive filling keeps them alike when
//   (1) every class path loads all links of a link class equally (true by construction: a link's
//       class is its capacity plus the list of (class path, weight) crossing it), and
//   (2) every member of a class path crosses the same link classes with the same total weight
//       (checked per member; where it fails, the class is split by that signature and the analysis
//       repeats).
// So the folded run gives the same times as the exact one (up to rounding); tests compare both.
// UGAL (routes depend on live load) and fabrics without enough symmetry (ECMP's per-pair hashes,
// failed links) get no folding or fewer classes; `note` says which.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "sim/engine.h"
#include "sim/net.h"
#include "sim/routing.h"
#include "sim/schedule_set.h"

namespace loom::sim {

// Latency of one message on `p` (per path class, SimOptions' parameters).
double pathLatency(const Path& p, bool selfMessage, const SimOptions& opt);

struct Folding {
  bool folded = false;
  std::string note;                // why not folded / what was folded
  std::vector<int32_t> classOf;    // rank -> class
  std::vector<int32_t> rep;        // class -> representative rank (its smallest)
  std::vector<int32_t> size;       // class -> members
  std::vector<double> linkCap;     // link class -> capacity of each of its links
  std::vector<int32_t> linkClass;  // link -> link class (-1: crossed by no class path)
  struct ClassPath {
    uint32_t off = 0, len = 0;  // into hops (link = link class, weight = per link of it)
    double latency = 0;
    bool local = false;  // no link: self message
  };
  std::unordered_map<uint64_t, uint32_t> pathOf;  // (class << 32 | send delta) -> paths index
  std::vector<ClassPath> paths;
  std::vector<PathHop> hops;
  static uint64_t key(int cls, int delta) {
    return (static_cast<uint64_t>(cls) << 32) | static_cast<uint32_t>(delta);
  }
};

// Classes for running `set` on `net`; out->folded is false (with a note) when folding would not
// pay (fewer than SimOptions::foldMinMembers ranks per class on average) or cannot be exact (UGAL).
Status foldRanks(const Net& net, const ScheduleSet& set, const std::vector<int>& rankGpu,
                 const SimOptions& opt, Folding* out);

}  // namespace loom::sim
