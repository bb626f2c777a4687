// Logging: LOOM_DEBUG=NONE|WARN|INFO|TRACE, LOOM_DEBUG_SUBSYS=INIT,TOPO,PLAN,NET,COLL (or ALL, ^X
// excludes). Lines start with "host:pid:rank". Usage: LOOM_INFO(NET, "connected to rank ", r);
#pragma once

#include <string>

#include "core/status.h"

namespace loom::log {

enum class Level : int { kNone = 0, kWarn = 1, kInfo = 2, kTrace = 3 };
enum class Subsys : int { INIT = 1, TOPO = 2, PLAN = 4, NET = 8, COLL = 16, SIM = 32 };

bool enabled(Level level, Subsys subsys);
void write(Level level, Subsys subsys, const std::string& msg);
// Rank shown in this thread's log lines (-1: none).
void setThreadRank(int rank);
int threadRank();
// Tests: re-read LOOM_DEBUG / LOOM_DEBUG_SUBSYS.
void reloadForTesting();
// A file name pattern with %h (host name), %p (pid) and, when rank >= 0, %r (rank) replaced.
std::string expandPath(const std::string& pattern, int rank = -1);

}  // namespace loom::log

#define LOOM_LOG_AT(level, subsys, ...)                                                    \
  do {                                                                                     \
    if (::loom::log::enabled(level, ::loom::log::Subsys::subsys))                          \
      ::loom::log::write(level, ::loom::log::Subsys::subsys, ::loom::strCat(__VA_ARGS__)); \
  } while (0)
#define LOOM_WARN(subsys, ...) LOOM_LOG_AT(::loom::log::Level::kWarn, subsys, __VA_ARGS__)
#define LOOM_INFO(subsys, ...) LOOM_LOG_AT(::loom::log::Level::kInfo, subsys, __VA_ARGS__)
#define LOOM_TRACE(subsys, ...) LOOM_LOG_AT(::loom::log::Level::kTrace, subsys, __VA_ARGS__)
