// Datatypes, reduction ops, input values and exact expected values for the perf drivers.
//
// Inputs are small integers chosen so that every reduction order gives the exact same result in
// every datatype (as nccl-tests does): sums stay below the type's exact-integer limit, products
// are powers of two, and avg inputs are multiples of the rank count. The expected value of any
// output element is therefore an exact double, and #wrong counts elements that differ from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "loom/loom.h"

namespace loom::perf {

size_t typeSize(loomDataType_t dt);
const char* typeName(loomDataType_t dt);
const char* opName(loomRedOp_t op);
bool parseType(const std::string& text, loomDataType_t* dt);
bool parseOp(const std::string& text, loomRedOp_t* op);

// Input element i of rank `rank` (of nranks) for reduction op `op`; `reduces` is false for
// collectives that only move data (values then differ per rank so misplaced blocks are caught).
double inputValue(loomDataType_t dt, loomRedOp_t op, bool reduces, int nranks, int rank, size_t i);

// The exact result of reducing inputValue() of all ranks at element i, wrapped to dt.
double reducedValue(loomDataType_t dt, loomRedOp_t op, int nranks, size_t i);

// Stores / loads one element as a double (half and bfloat16 round to nearest even on store).
void storeValue(void* buf, size_t i, loomDataType_t dt, double v);
double loadValue(const void* buf, size_t i, loomDataType_t dt);

// Wraps an integer result to the width and signedness of dt (floats: unchanged).
double wrapToType(loomDataType_t dt, double v);

}  // namespace loom::perf
