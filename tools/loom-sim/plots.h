// PNG plots through gnuplot: busbw against size per algorithm, link utilisation per level and
// per group. Data files (.dat) and scripts (.gp) stay next to the PNGs.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "sim/engine.h"
#include "sim/net.h"

namespace loom::simtool {

struct BusbwSeries {
  std::string name;                               // "ring", "ring (failed)"
  std::vector<std::pair<double, double>> points;  // (bytes, busbw GB/s)
};
Status plotBusbw(const std::string& dir, const std::string& title,
                 const std::vector<BusbwSeries>& series);
// util_<tag>.png (sorted per-level curves) and, with groups, util_groups_<tag>.png.
Status plotUtilisation(const std::string& dir, const std::string& tag, const std::string& title,
                       const sim::Net& net, const sim::SimResult& r);

}  // namespace loom::simtool
