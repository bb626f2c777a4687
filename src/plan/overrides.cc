#include "plan/overrides.h"

#include <sstream>

namespace loom::plan {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) {
    size_t a = item.find_first_not_of(" \t"), b = item.find_last_not_of(" \t");
    if (a != std::string::npos) out.push_back(item.substr(a, b - a + 1));
  }
  return out;
}

// "ring" or "ring/rank" / "ring/topo" into t->algo and t->order.
Status parseAlgo(const char* var, const std::string& s, TuneRange* t) {
  size_t slash = s.find('/');
  t->algo = s.substr(0, slash);
  t->order = slash == std::string::npos ? "" : s.substr(slash + 1);
  if (slash != std::string::npos && t->order != "rank" && t->order != "topo")
    return invalidArgument(var, ": ordering '", t->order, "' in '", s, "' is not rank or topo");
  if (t->algo.empty()) return invalidArgument(var, ": '", s, "' names no algorithm");
  return Status();
}

}  // namespace

Status parseCollName(const std::string& s, sched::CollType* out) {
  for (int c = 0; c < sched::kNumCollTypes; ++c) {
    if (s == sched::collName(static_cast<sched::CollType>(c))) {
      *out = static_cast<sched::CollType>(c);
      return Status();
    }
  }
  return invalidArgument("unknown collective '", s, "'");
}

Status parseSize(const std::string& s, uint64_t* out) {
  if (s == "inf") {
    *out = ~uint64_t{0};
    return Status();
  }
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (end == s.c_str()) return invalidArgument("bad size '", s, "'");
  std::string suf(end);
  uint64_t mul = 1;
  if (suf == "k" || suf == "K")
    mul = 1ull << 10;
  else if (suf == "m" || suf == "M")
    mul = 1ull << 20;
  else if (suf == "g" || suf == "G")
    mul = 1ull << 30;
  else if (!suf.empty())
    return invalidArgument("bad size suffix in '", s, "'");
  *out = v * mul;
  return Status();
}

Status parseOverrides(const std::string& algo, const std::string& tune, Overrides* out) {
  *out = Overrides();
  for (const std::string& sect : split(algo, ';')) {
    for (const std::string& e : split(sect, ',')) {
      size_t c = e.find(':');
      if (c == std::string::npos)
        return invalidArgument("LOOM_ALGO: '", e, "' is not collective:algorithm");
      TuneRange t;
      LOOM_CHECK(parseCollName(e.substr(0, c), &t.coll));
      LOOM_CHECK(parseAlgo("LOOM_ALGO", e.substr(c + 1), &t));
      out->forced.push_back(t);
    }
  }
  for (const std::string& sect : split(tune, ';')) {
    size_t c = sect.find(':');
    if (c == std::string::npos) return invalidArgument("LOOM_TUNE: '", sect, "' has no collective");
    sched::CollType coll;
    LOOM_CHECK(parseCollName(sect.substr(0, c), &coll));
    for (const std::string& r : split(sect.substr(c + 1), ',')) {
      size_t dash = r.find('-'), colon = r.find(':');
      if (dash == std::string::npos || colon == std::string::npos || colon < dash)
        return invalidArgument("LOOM_TUNE: '", r, "' is not lo-hi:algorithm");
      TuneRange t;
      t.coll = coll;
      LOOM_CHECK(parseSize(r.substr(0, dash), &t.lo));
      LOOM_CHECK(parseSize(r.substr(dash + 1, colon - dash - 1), &t.hi));
      LOOM_CHECK(parseAlgo("LOOM_TUNE", r.substr(colon + 1), &t));
      if (t.lo >= t.hi) return invalidArgument("LOOM_TUNE: empty range '", r, "'");
      out->tune.push_back(t);
    }
  }
  return Status();
}

std::string Overrides::lookup(sched::CollType coll, uint64_t bytes, std::string* source,
                              std::string* order) const {
  const TuneRange* hit = nullptr;
  const char* var = "LOOM_ALGO";
  for (const TuneRange& t : forced)
    if (!hit && t.coll == coll) hit = &t;
  for (const TuneRange& t : tune)
    if (!hit && t.coll == coll && bytes >= t.lo && bytes < t.hi) hit = &t, var = "LOOM_TUNE";
  if (order) *order = hit ? hit->order : "";
  if (hit && source) *source = var;
  return hit ? hit->algo : "";
}

}  // namespace loom::plan
