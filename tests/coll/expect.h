// Inputs whose exact results are known (as nccl-tests): small integers, so every sum, product,
// max and min is exact in every dtype; expected values are computed independently of loom's
// kernels, in double arithmetic.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "loom/loom.h"

namespace loom::testing {

size_t typeSize(loomDataType_t dt);
// Value of element i of rank r's input.
int inputValue(loomRedOp_t op, int rank, uint64_t i);
void fillInput(void* buf, uint64_t n, loomDataType_t dt, loomRedOp_t op, int rank, uint64_t first);
// Expected reduction over p ranks of element i.
double expectedReduced(loomRedOp_t op, int p, uint64_t i, loomDataType_t dt);
double load(const void* buf, uint64_t i, loomDataType_t dt);
// Compares n elements with want(i); returns "" or a description of the first mismatch.
template <typename F>
std::string compare(const void* buf, uint64_t n, loomDataType_t dt, F want,
                    const std::string& what) {
  for (uint64_t i = 0; i < n; ++i) {
    double got = load(buf, i, dt), w = want(i);
    if (got != w)
      return what + ": element " + std::to_string(i) + " is " + std::to_string(got) +
             ", expected " + std::to_string(w);
  }
  return "";
}

}  // namespace loom::testing
