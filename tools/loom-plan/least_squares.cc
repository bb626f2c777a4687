// Weighted linear least squares (least_squares.h).
#include "least_squares.h"

#include <cmath>
#include <utility>

namespace loomplan {

bool leastSquares(const std::vector<std::vector<double>>& rows, const std::vector<double>& y,
                  const std::vector<double>& w, const std::vector<int>& cols,
                  std::vector<double>* x) {
  const size_t n = cols.size();
  std::vector<std::vector<double>> A(n, std::vector<double>(n + 1, 0.0));  // normal equations
  for (size_t k = 0; k < rows.size(); ++k)
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) A[i][j] += w[k] * w[k] * rows[k][cols[i]] * rows[k][cols[j]];
      A[i][n] += w[k] * w[k] * rows[k][cols[i]] * y[k];
    }
  for (size_t c = 0; c < n; ++c) {  // Gauss-Jordan, partial pivoting
    size_t piv = c;
    for (size_t r = c + 1; r < n; ++r)
      if (std::abs(A[r][c]) > std::abs(A[piv][c])) piv = r;
    std::swap(A[c], A[piv]);
    if (std::abs(A[c][c]) < 1e-30) return false;
    for (size_t r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = A[r][c] / A[c][c];
      for (size_t k = c; k <= n; ++k) A[r][k] -= f * A[c][k];
    }
  }
  x->assign(rows.empty() ? 0 : rows[0].size(), 0.0);
  for (size_t i = 0; i < n; ++i) (*x)[cols[i]] = A[i][n] / A[i][i];
  return true;
}

}  // namespace loomplan
