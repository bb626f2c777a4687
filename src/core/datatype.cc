#include "core/datatype.h"

namespace loom {

size_t dtypeSize(DataType dt) {
  switch (dt) {
    case DataType::kInt8:
    case DataType::kUint8:
      return 1;
    case DataType::kFloat16:
    case DataType::kBfloat16:
      return 2;
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kFloat32:
      return 4;
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kFloat64:
      return 8;
  }
  return 0;
}

const char* dtypeName(DataType dt) {
  static const char* kNames[] = {"int8",   "uint8",   "int32",   "uint32",  "int64",
                                 "uint64", "float16", "float32", "float64", "bfloat16"};
  int i = static_cast<int>(dt);
  return validDataType(i) ? kNames[i] : "invalid";
}

const char* ncclTestsTypeName(DataType dt) {
  static const char* kNames[] = {"int8",   "uint8", "int32", "uint32", "int64",
                                 "uint64", "half",  "float", "double", "bfloat16"};
  int i = static_cast<int>(dt);
  return validDataType(i) ? kNames[i] : "invalid";
}

const char* opName(RedOp op) {
  static const char* kNames[] = {"sum", "prod", "max", "min", "avg"};
  int i = static_cast<int>(op);
  return validRedOp(i) ? kNames[i] : "invalid";
}

bool validDataType(int dt) { return dt >= 0 && dt < kNumDataTypes; }
bool validRedOp(int op) { return op >= 0 && op < kNumRedOps; }
bool isFloat(DataType dt) {
  return dt == DataType::kFloat16 || dt == DataType::kBfloat16 || dt == DataType::kFloat32 ||
         dt == DataType::kFloat64;
}

}  // namespace loom
