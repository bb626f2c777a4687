// The GPU kernels' entry points in a build without CUDA: each says so instead of failing to link.
#ifndef LOOM_HAVE_CUDA
#include "kernels/reduce_cuda.h"

namespace loom::kernels::cuda {

namespace {
const char kNoCuda[] = "loom was built without CUDA (LOOM_CUDA=OFF or no CUDA toolkit found)";
}

bool deviceAvailable(std::string* why) {
  if (why) *why = kNoCuda;
  return false;
}

Status reduce(void*, const void*, const void*, size_t, DataType, RedOp, void*) {
  return invalidUsage(kNoCuda);
}

Status divideInPlace(void*, size_t, DataType, int, void*) { return invalidUsage(kNoCuda); }

}  // namespace loom::kernels::cuda
#endif  // LOOM_HAVE_CUDA
