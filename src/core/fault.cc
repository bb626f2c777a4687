#include "core/fault.h"

#include <cerrno>
#include <cstdlib>

namespace loom {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

bool parseInt(const std::string& v, int64_t lo, int64_t* out) {
  if (v.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long x = std::strtoll(v.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || x < lo) return false;
  *out = x;
  return true;
}

const char* const kKinds[] = {"kill", "stop", "stall", "close", "flip"};

Status parseEntry(const std::string& entry, size_t index, FaultSpec* f) {
  const std::vector<std::string> parts = split(entry, ':');
  int kind = -1;
  for (int k = 0; k < 5; ++k)
    if (parts[0] == kKinds[k]) kind = k;
  if (kind < 0)
    return invalidArgument("LOOM_FAULT entry ", index + 1, " ('", entry, "'): '", parts[0],
                           "' is not one of kill, stop, stall, close, flip");
  f->kind = static_cast<FaultSpec::Kind>(kind);
  for (size_t i = 1; i < parts.size(); ++i) {
    const size_t eq = parts[i].find('=');
    const std::string key = parts[i].substr(0, eq);
    const std::string val = eq == std::string::npos ? "" : parts[i].substr(eq + 1);
    int64_t x = 0;
    bool ok = false;
    bool allowed = true;
    if (key == "rank" || key == "peer") {
      ok = parseInt(val, 0, &x);
      allowed =
          key == "rank" || f->kind == FaultSpec::Kind::kClose || f->kind == FaultSpec::Kind::kFlip;
      (key == "rank" ? f->rank : f->peer) = static_cast<int>(x);
    } else if (key == "op") {
      ok = parseInt(val, 1, &x);
      f->op = static_cast<uint64_t>(x);
    } else if (key == "after") {
      ok = parseInt(val, 0, &x);
      allowed = f->kind == FaultSpec::Kind::kKill || f->kind == FaultSpec::Kind::kStop;
      f->afterMs = x;
    } else if (key == "ms") {
      ok = parseInt(val, 0, &x);
      allowed = f->kind == FaultSpec::Kind::kStall;
      f->ms = x;
    } else {
      return invalidArgument("LOOM_FAULT entry ", index + 1, " ('", entry, "'): unknown option '",
                             key, "' (rank, op, peer, after, ms)");
    }
    if (!allowed)
      return invalidArgument("LOOM_FAULT entry ", index + 1, " ('", entry, "'): ", parts[0],
                             " takes no option '", key, "'");
    if (!ok)
      return invalidArgument("LOOM_FAULT entry ", index + 1, " ('", entry, "'): '", val,
                             "' is not a valid value for ", key,
                             key == "op" ? " (an integer >= 1)" : " (an integer >= 0)");
  }
  return Status();
}

}  // namespace

const char* faultKindName(FaultSpec::Kind k) { return kKinds[static_cast<int>(k)]; }

Status parseFaults(const std::string& spec, std::vector<FaultSpec>* out) {
  out->clear();
  if (spec.empty()) return Status();
  const std::vector<std::string> entries = split(spec, ',');
  for (size_t i = 0; i < entries.size(); ++i) {
    FaultSpec f;
    LOOM_CHECK(parseEntry(entries[i], i, &f));
    out->push_back(f);
  }
  return Status();
}

}  // namespace loom
