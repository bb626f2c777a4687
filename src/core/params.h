// Typed accessors for the parameter table in params.def. The only getenv in loom lives in
// params.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace loom::params {

#define LOOM_PARAM_INT(name, env, def, help) int64_t name();
#define LOOM_PARAM_STR(name, env, def, help) std::string name();
#include "core/params.def"
#undef LOOM_PARAM_INT
#undef LOOM_PARAM_STR

struct ParamInfo {
  const char* env;
  const char* type;  // "int" or "string"
  std::string defaultValue;
  std::string value;  // current effective value
  const char* help;
};
std::vector<ParamInfo> all();

// Reads an environment variable not in the table (launcher variables such as OMPI_COMM_WORLD_RANK).
// Returns false when unset.
bool rawEnv(const char* name, std::string* out);

// Tests: drop cached values so a changed environment is read again.
void resetCacheForTesting();

}  // namespace loom::params
