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
      t.algo = e.substr(c + 1);
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
      t.algo = r.substr(colon + 1);
      if (t.lo >= t.hi) return invalidArgument("LOOM_TUNE: empty range '", r, "'");
      out->tune.push_back(t);
    }
  }
  return Status();
}

std::string Overrides::lookup(sched::CollType coll, uint64_t bytes, std::string* source) const {
  for (const TuneRange& t : forced) {
    if (t.coll == coll) {
      if (source) *source = "LOOM_ALGO";
      return t.algo;
    }
  }
  for (const TuneRange& t : tune) {
    if (t.coll == coll && bytes >= t.lo && bytes < t.hi) {
      if (source) *source = "LOOM_TUNE";
      return t.algo;
    }
  }
  return "";
}

}  // namespace loom::plan
