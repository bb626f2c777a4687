// Weighted linear least squares for loom-plan --calibrate's fits.
#pragma once

#include <vector>

namespace loomplan {

// x minimising sum_i w_i^2 (rows_i . x - y_i)^2 over the columns `cols` (the others 0), by the
// normal equations and Gauss-Jordan with partial pivoting; false when singular.
bool leastSquares(const std::vector<std::vector<double>>& rows, const std::vector<double>& y,
                  const std::vector<double>& w, const std::vector<int>& cols,
                  std::vector<double>* x);

}  // namespace loomplan
