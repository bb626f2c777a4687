#include "coll/expect.h"

#include <cmath>
#include <cstring>

#include "kernels/reduce.h"

namespace loom::testing {

size_t typeSize(loomDataType_t dt) {
  switch (dt) {
    case loomInt8:
    case loomUint8:
      return 1;
    case loomFloat16:
    case loomBfloat16:
      return 2;
    case loomInt32:
    case loomUint32:
    case loomFloat32:
      return 4;
    default:
      return 8;
  }
}

int inputValue(loomRedOp_t op, int rank, uint64_t i) {
  if (op == loomProd) return ((rank + i) % 7 == 0) ? 2 : 1;
  return static_cast<int>((rank * 7 + i * 3 + 1) % 11);
}

static void store(void* buf, uint64_t i, loomDataType_t dt, double v) {
  char* p = static_cast<char*>(buf) + i * typeSize(dt);
  switch (dt) {
    case loomInt8: {
      int8_t x = static_cast<int8_t>(v);
      std::memcpy(p, &x, 1);
      break;
    }
    case loomUint8: {
      uint8_t x = static_cast<uint8_t>(v);
      std::memcpy(p, &x, 1);
      break;
    }
    case loomInt32: {
      int32_t x = static_cast<int32_t>(v);
      std::memcpy(p, &x, 4);
      break;
    }
    case loomUint32: {
      uint32_t x = static_cast<uint32_t>(v);
      std::memcpy(p, &x, 4);
      break;
    }
    case loomInt64: {
      int64_t x = static_cast<int64_t>(v);
      std::memcpy(p, &x, 8);
      break;
    }
    case loomUint64: {
      uint64_t x = static_cast<uint64_t>(v);
      std::memcpy(p, &x, 8);
      break;
    }
    case loomFloat16: {
      uint16_t x = kernels::floatToHalf(static_cast<float>(v));
      std::memcpy(p, &x, 2);
      break;
    }
    case loomBfloat16: {
      uint16_t x = kernels::floatToBf16(static_cast<float>(v));
      std::memcpy(p, &x, 2);
      break;
    }
    case loomFloat32: {
      float x = static_cast<float>(v);
      std::memcpy(p, &x, 4);
      break;
    }
    default: {
      double x = v;
      std::memcpy(p, &x, 8);
      break;
    }
  }
}

double load(const void* buf, uint64_t i, loomDataType_t dt) {
  const char* p = static_cast<const char*>(buf) + i * typeSize(dt);
  switch (dt) {
    case loomInt8: {
      int8_t x;
      std::memcpy(&x, p, 1);
      return x;
    }
    case loomUint8: {
      uint8_t x;
      std::memcpy(&x, p, 1);
      return x;
    }
    case loomInt32: {
      int32_t x;
      std::memcpy(&x, p, 4);
      return x;
    }
    case loomUint32: {
      uint32_t x;
      std::memcpy(&x, p, 4);
      return x;
    }
    case loomInt64: {
      int64_t x;
      std::memcpy(&x, p, 8);
      return static_cast<double>(x);
    }
    case loomUint64: {
      uint64_t x;
      std::memcpy(&x, p, 8);
      return static_cast<double>(x);
    }
    case loomFloat16: {
      uint16_t x;
      std::memcpy(&x, p, 2);
      return kernels::halfToFloat(x);
    }
    case loomBfloat16: {
      uint16_t x;
      std::memcpy(&x, p, 2);
      return kernels::bf16ToFloat(x);
    }
    case loomFloat32: {
      float x;
      std::memcpy(&x, p, 4);
      return x;
    }
    default: {
      double x;
      std::memcpy(&x, p, 8);
      return x;
    }
  }
}

void fillInput(void* buf, uint64_t n, loomDataType_t dt, loomRedOp_t op, int rank, uint64_t first) {
  for (uint64_t i = 0; i < n; ++i) store(buf, i, dt, inputValue(op, rank, first + i));
}

double expectedReduced(loomRedOp_t op, int p, uint64_t i, loomDataType_t dt) {
  double acc = inputValue(op, 0, i);
  for (int r = 1; r < p; ++r) {
    double v = inputValue(op, r, i);
    switch (op) {
      case loomProd:
        acc *= v;
        break;
      case loomMax:
        acc = std::max(acc, v);
        break;
      case loomMin:
        acc = std::min(acc, v);
        break;
      default:
        acc += v;
    }
  }
  if (op == loomAvg) {
    bool isInt = dt != loomFloat16 && dt != loomBfloat16 && dt != loomFloat32 && dt != loomFloat64;
    if (isInt) return std::trunc(acc / p);
    if (dt == loomFloat32) return static_cast<float>(acc) / static_cast<float>(p);
    if (dt == loomFloat16)
      return kernels::halfToFloat(kernels::floatToHalf(static_cast<float>(acc) / p));
    if (dt == loomBfloat16)
      return kernels::bf16ToFloat(kernels::floatToBf16(static_cast<float>(acc) / p));
    return acc / p;
  }
  return acc;
}

}  // namespace loom::testing
