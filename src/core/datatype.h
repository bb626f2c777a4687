// Element types and reduction ops; numbering equals loom.h (and NCCL).
#pragma once

#include <cstddef>
#include <cstdint>

namespace loom {

enum class DataType : int {
  kInt8 = 0,
  kUint8 = 1,
  kInt32 = 2,
  kUint32 = 3,
  kInt64 = 4,
  kUint64 = 5,
  kFloat16 = 6,
  kFloat32 = 7,
  kFloat64 = 8,
  kBfloat16 = 9,
};
constexpr int kNumDataTypes = 10;

enum class RedOp : int { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4 };
constexpr int kNumRedOps = 5;

size_t dtypeSize(DataType dt);
const char* dtypeName(DataType dt);  // "float32", ... (nccl-tests names: "float", ...) see below
const char* ncclTestsTypeName(
    DataType dt);              // int8 uint8 int32 uint32 int64 uint64 half float double bfloat16
const char* opName(RedOp op);  // "sum", "prod", "max", "min", "avg"
bool validDataType(int dt);
bool validRedOp(int op);
bool isFloat(DataType dt);

}  // namespace loom
