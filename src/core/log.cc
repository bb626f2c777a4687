#include "core/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <sstream>

#include "core/params.h"

namespace loom::log {
namespace {

struct Config {
  Level level = Level::kWarn;
  int subsysMask = ~0;
  FILE* out = stderr;
  std::string host;
};

std::atomic<int> loaded{0};
Config& cfg() {
  static Config c;
  return c;
}
thread_local int tRank = -1;

Level parseLevel(const std::string& s) {
  if (s == "NONE" || s == "none") return Level::kNone;
  if (s == "INFO" || s == "info") return Level::kInfo;
  if (s == "TRACE" || s == "trace") return Level::kTrace;
  return Level::kWarn;
}

int parseSubsys(const std::string& s) {
  struct Name {
    const char* n;
    Subsys v;
  };
  static const Name kNames[] = {{"INIT", Subsys::INIT}, {"TOPO", Subsys::TOPO},
                                {"PLAN", Subsys::PLAN}, {"NET", Subsys::NET},
                                {"COLL", Subsys::COLL}, {"SIM", Subsys::SIM}};
  bool exclude = !s.empty() && s[0] == '^';
  int mask = exclude ? ~0 : 0;
  std::stringstream ss(exclude ? s.substr(1) : s);
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    if (tok == "ALL") {
      mask = exclude ? 0 : ~0;
      continue;
    }
    for (const auto& n : kNames) {
      if (tok == n.n)
        mask = exclude ? (mask & ~static_cast<int>(n.v)) : (mask | static_cast<int>(n.v));
    }
  }
  return mask;
}

void load() {
  static std::mutex m;
  std::lock_guard<std::mutex> g(m);
  if (loaded.load()) return;
  Config& c = cfg();
  c.level = parseLevel(params::debug());
  c.subsysMask = parseSubsys(params::debugSubsys());
  char h[256] = {0};
  gethostname(h, sizeof(h) - 1);
  c.host = h;
  std::string file = params::debugFile();
  if (!file.empty()) {
    std::string path = expandPath(file);
    FILE* f = std::fopen(path.c_str(), "a");
    if (f != nullptr) c.out = f;
  }
  loaded.store(1);
}

const char* levelName(Level l) {
  switch (l) {
    case Level::kWarn:
      return "WARN";
    case Level::kInfo:
      return "INFO";
    case Level::kTrace:
      return "TRACE";
    default:
      return "";
  }
}

}  // namespace

bool enabled(Level level, Subsys subsys) {
  if (!loaded.load(std::memory_order_acquire)) load();
  const Config& c = cfg();
  return level != Level::kNone && static_cast<int>(level) <= static_cast<int>(c.level) &&
         (c.subsysMask & static_cast<int>(subsys)) != 0;
}

void write(Level level, Subsys, const std::string& msg) {
  const Config& c = cfg();
  std::string line =
      strCat(c.host, ":", getpid(), ":", tRank, " loom ", levelName(level), " ", msg, "\n");
  std::fwrite(line.data(), 1, line.size(), c.out);
  std::fflush(c.out);
}

void setThreadRank(int rank) { tRank = rank; }
int threadRank() { return tRank; }

std::string expandPath(const std::string& pattern, int rank) {
  std::string path;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char next = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
    if (pattern[i] == '%' && next == 'h') {
      char h[256] = {0};
      gethostname(h, sizeof(h) - 1);
      path += h;
    } else if (pattern[i] == '%' && next == 'p') {
      path += std::to_string(getpid());
    } else if (pattern[i] == '%' && next == 'r' && rank >= 0) {
      path += std::to_string(rank);
    } else {
      path += pattern[i];
      continue;
    }
    ++i;
  }
  return path;
}
void reloadForTesting() { loaded.store(0); }

}  // namespace loom::log
