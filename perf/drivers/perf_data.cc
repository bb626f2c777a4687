#include "perf_data.h"

#include <cmath>
#include <cstring>

namespace loom::perf {
namespace {

struct TypeRow {
  loomDataType_t dt;
  const char* name;
  size_t size;
  double exactLimit;  // largest integer the type holds exactly (capped for wide types)
};

const TypeRow kTypes[] = {
    {loomInt8, "int8", 1, 127},      {loomUint8, "uint8", 1, 255},
    {loomInt32, "int32", 4, 1e6},    {loomUint32, "uint32", 4, 1e6},
    {loomInt64, "int64", 8, 1e6},    {loomUint64, "uint64", 8, 1e6},
    {loomFloat16, "half", 2, 2048},  {loomFloat32, "float", 4, 1e6},
    {loomFloat64, "double", 8, 1e6}, {loomBfloat16, "bfloat16", 2, 256},
};

const char* const kOpNames[] = {"sum", "prod", "max", "min", "avg"};

const TypeRow& row(loomDataType_t dt) {
  for (const TypeRow& r : kTypes) {
    if (r.dt == dt) return r;
  }
  return kTypes[7];
}

uint16_t floatToHalfBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mant = x & 0x7fffffu;
  int exp = static_cast<int>((x >> 23) & 0xffu);
  if (exp == 255) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  int e = exp - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {  // half subnormal (or zero)
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    int shift = 14 - e;
    uint32_t h = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (h & 1u))) h++;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;  // a carry rounds into the exponent
  return static_cast<uint16_t>(sign | h);
}

double halfBitsToDouble(uint16_t h) {
  double sign = (h & 0x8000u) ? -1.0 : 1.0;
  int exp = (h >> 10) & 0x1f;
  int mant = h & 0x3ff;
  if (exp == 0) return sign * std::ldexp(mant, -24);
  if (exp == 31) return mant ? NAN : sign * INFINITY;
  return sign * std::ldexp(1024 + mant, exp - 25);
}

uint16_t floatToBf16Bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

double bf16BitsToDouble(uint16_t h) {
  uint32_t x = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// Values 0..k-1 with k chosen so that a sum over nranks stays exact.
size_t valueRange(loomDataType_t dt, int divisor) {
  double k = row(dt).exactLimit / divisor;
  if (k > 1000) k = 1000;
  return k < 1 ? 1 : static_cast<size_t>(k);
}

}  // namespace

size_t typeSize(loomDataType_t dt) { return row(dt).size; }
const char* typeName(loomDataType_t dt) { return row(dt).name; }
const char* opName(loomRedOp_t op) { return (op >= 0 && op < loomNumOps) ? kOpNames[op] : "none"; }

bool parseType(const std::string& text, loomDataType_t* dt) {
  for (const TypeRow& r : kTypes) {
    if (text == r.name) {
      *dt = r.dt;
      return true;
    }
  }
  if (text == "float32" || text == "fp32")
    *dt = loomFloat32;
  else if (text == "float16" || text == "fp16")
    *dt = loomFloat16;
  else if (text == "float64" || text == "fp64")
    *dt = loomFloat64;
  else if (text == "bf16")
    *dt = loomBfloat16;
  else if (text == "int")
    *dt = loomInt32;
  else
    return false;
  return true;
}

bool parseOp(const std::string& text, loomRedOp_t* op) {
  for (int i = 0; i < loomNumOps; ++i) {
    if (text == kOpNames[i]) {
      *op = static_cast<loomRedOp_t>(i);
      return true;
    }
  }
  return false;
}

double inputValue(loomDataType_t dt, loomRedOp_t op, bool reduces, int nranks, int rank, size_t i) {
  size_t mix = i * 3 + static_cast<size_t>(rank) * 7 + 1;
  if (!reduces) return static_cast<double>(mix % valueRange(dt, 1));
  switch (op) {
    case loomProd:
      return ((i + static_cast<size_t>(rank)) % 5 == 0) ? 2.0 : 1.0;
    case loomAvg:
      return nranks * static_cast<double>(mix % valueRange(dt, nranks * nranks));
    default:
      return static_cast<double>(mix % valueRange(dt, nranks));
  }
}

double reducedValue(loomDataType_t dt, loomRedOp_t op, int nranks, size_t i) {
  double acc = inputValue(dt, op, true, nranks, 0, i);
  for (int r = 1; r < nranks; ++r) {
    double v = inputValue(dt, op, true, nranks, r, i);
    switch (op) {
      case loomProd:
        acc *= v;
        break;
      case loomMax:
        acc = v > acc ? v : acc;
        break;
      case loomMin:
        acc = v < acc ? v : acc;
        break;
      default:
        acc += v;
        break;
    }
  }
  if (op == loomAvg) acc /= nranks;  // exact: every input is a multiple of nranks
  return wrapToType(dt, acc);
}

double wrapToType(loomDataType_t dt, double v) {
  switch (dt) {
    case loomInt8:
      return static_cast<int8_t>(static_cast<int64_t>(v));
    case loomUint8:
      return static_cast<uint8_t>(static_cast<int64_t>(v));
    case loomInt32:
      return static_cast<int32_t>(static_cast<int64_t>(v));
    case loomUint32:
      return static_cast<uint32_t>(static_cast<int64_t>(v));
    default:
      return v;
  }
}

void storeValue(void* buf, size_t i, loomDataType_t dt, double v) {
  switch (dt) {
    case loomInt8:
      static_cast<int8_t*>(buf)[i] = static_cast<int8_t>(v);
      break;
    case loomUint8:
      static_cast<uint8_t*>(buf)[i] = static_cast<uint8_t>(v);
      break;
    case loomInt32:
      static_cast<int32_t*>(buf)[i] = static_cast<int32_t>(v);
      break;
    case loomUint32:
      static_cast<uint32_t*>(buf)[i] = static_cast<uint32_t>(v);
      break;
    case loomInt64:
      static_cast<int64_t*>(buf)[i] = static_cast<int64_t>(v);
      break;
    case loomUint64:
      static_cast<uint64_t*>(buf)[i] = static_cast<uint64_t>(v);
      break;
    case loomFloat16:
      static_cast<uint16_t*>(buf)[i] = floatToHalfBits(static_cast<float>(v));
      break;
    case loomBfloat16:
      static_cast<uint16_t*>(buf)[i] = floatToBf16Bits(static_cast<float>(v));
      break;
    case loomFloat64:
      static_cast<double*>(buf)[i] = v;
      break;
    default:
      static_cast<float*>(buf)[i] = static_cast<float>(v);
      break;
  }
}

double loadValue(const void* buf, size_t i, loomDataType_t dt) {
  switch (dt) {
    case loomInt8:
      return static_cast<const int8_t*>(buf)[i];
    case loomUint8:
      return static_cast<const uint8_t*>(buf)[i];
    case loomInt32:
      return static_cast<const int32_t*>(buf)[i];
    case loomUint32:
      return static_cast<const uint32_t*>(buf)[i];
    case loomInt64:
      return static_cast<double>(static_cast<const int64_t*>(buf)[i]);
    case loomUint64:
      return static_cast<double>(static_cast<const uint64_t*>(buf)[i]);
    case loomFloat16:
      return halfBitsToDouble(static_cast<const uint16_t*>(buf)[i]);
    case loomBfloat16:
      return bf16BitsToDouble(static_cast<const uint16_t*>(buf)[i]);
    case loomFloat64:
      return static_cast<const double*>(buf)[i];
    default:
      return static_cast<const float*>(buf)[i];
  }
}

}  // namespace loom::perf
