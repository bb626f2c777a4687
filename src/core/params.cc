#include "core/params.h"

#include <cstdlib>
#include <mutex>

#include "core/log.h"

namespace loom::params {
namespace {

std::recursive_mutex& mu() {
  static std::recursive_mutex m;
  return m;
}
int generation = 0;

int64_t parseInt(const char* env, int64_t def) {
  const char* v = std::getenv(env);
  if (v == nullptr || *v == '\0') return def;
  char* end = nullptr;
  long long x = std::strtoll(v, &end, 0);
  if (end == v) {
    LOOM_WARN(INIT, env, "=", v, " is not an integer; using default ", def);
    return def;
  }
  // Accept k/m/g suffixes for sizes.
  switch (*end) {
    case 'k':
    case 'K':
      x <<= 10;
      break;
    case 'm':
    case 'M':
      x <<= 20;
      break;
    case 'g':
    case 'G':
      x <<= 30;
      break;
    default:
      break;
  }
  return x;
}

std::string parseStr(const char* env, const char* def) {
  const char* v = std::getenv(env);
  return v != nullptr ? std::string(v) : std::string(def);
}

}  // namespace

#define LOOM_PARAM_INT(name, env, def, help)       \
  int64_t name() {                                 \
    static int gen = -1;                           \
    static int64_t cached;                         \
    std::lock_guard<std::recursive_mutex> g(mu()); \
    if (gen != generation) {                       \
      cached = parseInt(env, def);                 \
      gen = generation;                            \
    }                                              \
    return cached;                                 \
  }
#define LOOM_PARAM_STR(name, env, def, help)       \
  std::string name() {                             \
    static int gen = -1;                           \
    static std::string cached;                     \
    std::lock_guard<std::recursive_mutex> g(mu()); \
    if (gen != generation) {                       \
      cached = parseStr(env, def);                 \
      gen = generation;                            \
    }                                              \
    return cached;                                 \
  }
#include "core/params.def"
#undef LOOM_PARAM_INT
#undef LOOM_PARAM_STR

std::vector<ParamInfo> all() {
  std::vector<ParamInfo> out;
#define LOOM_PARAM_INT(name, env, def, help) \
  out.push_back(                             \
      {env, "int", std::to_string(static_cast<int64_t>(def)), std::to_string(name()), help});
#define LOOM_PARAM_STR(name, env, def, help) out.push_back({env, "string", def, name(), help});
#include "core/params.def"
#undef LOOM_PARAM_INT
#undef LOOM_PARAM_STR
  return out;
}

bool rawEnv(const char* name, std::string* out) {
  const char* v = std::getenv(name);
  if (v == nullptr) return false;
  *out = v;
  return true;
}

void resetCacheForTesting() {
  std::lock_guard<std::recursive_mutex> g(mu());
  ++generation;
}

}  // namespace loom::params
