// CostParams: reading and writing the cost model's parameters ("key=value,..." or flat JSON),
// the per-algorithm fits and the measured tuning table; names of transports and path classes.
#include <cstdlib>
#include <sstream>

#include "plan/cost_model.h"

namespace loom::plan {

const char* transportName(Transport t) {
  switch (t) {
    case Transport::kShm:
      return "shm";
    case Transport::kTcp:
      return "tcp";
    case Transport::kNet:
      return "net";
  }
  return "?";
}

const char* pathKindName(PathKind k) {
  switch (k) {
    case PathKind::kLocal:
      return "local";
    case PathKind::kLeaf:
      return "leaf";
    case PathKind::kSpine:
      return "spine";
    case PathKind::kGlobal:
      return "global";
    case PathKind::kFlat:
      return "flat";
  }
  return "?";
}

namespace {
struct ParamField {
  const char* key;
  double CostParams::*field;
};
const ParamField kFields[] = {
    {"shmAlphaUs", &CostParams::shmAlphaUs},
    {"shmGBps", &CostParams::shmGBps},
    {"hostMemGBps", &CostParams::hostMemGBps},
    {"tcpAlphaUs", &CostParams::tcpAlphaUs},
    {"tcpGBps", &CostParams::tcpGBps},
    {"netAlphaUs", &CostParams::netAlphaUs},
    {"switchHopUs", &CostParams::switchHopUs},
    {"netGBps", &CostParams::netGBps},
    {"reduceGBps", &CostParams::reduceGBps},
    {"cores", &CostParams::cores},
    {"shmAlphaCpu", &CostParams::shmAlphaCpu},
    {"tcpAlphaCpu", &CostParams::tcpAlphaCpu},
    {"shmCmaGBps", &CostParams::shmCmaGBps},
    {"shmCmaBytes", &CostParams::shmCmaBytes},
    {"shmEagerBytes", &CostParams::shmEagerBytes},
    {"shmBigAlphaUs", &CostParams::shmBigAlphaUs},
    {"shmCacheBytes", &CostParams::shmCacheBytes},
    {"shmCacheGBps", &CostParams::shmCacheGBps},
    {"tcpEagerBytes", &CostParams::tcpEagerBytes},
    {"tcpBigAlphaUs", &CostParams::tcpBigAlphaUs},
    {"tcpCacheBytes", &CostParams::tcpCacheBytes},
    {"tcpCacheGBps", &CostParams::tcpCacheGBps},
    {"shmCacheFootprint", &CostParams::shmCacheFootprint},
    {"tcpCacheFootprint", &CostParams::tcpCacheFootprint},
};
// Keys whose value may be 0 (the term is off).
bool zeroAllowed(const std::string& k) {
  for (const char* z : {"cores", "shmAlphaCpu", "tcpAlphaCpu", "shmCmaGBps", "shmBigAlphaUs",
                        "shmCacheGBps", "tcpBigAlphaUs", "tcpCacheGBps", "shmEagerBytes",
                        "tcpEagerBytes", "shmCacheFootprint", "tcpCacheFootprint"})
    if (k == z) return true;
  return false;
}
struct FitField {
  const char* key;
  double AlgoFit::*field;
};
const FitField kFitFields[] = {{"baseUs", &AlgoFit::baseUs},
                               {"roundUs", &AlgoFit::roundUs},
                               {"wakeUs", &AlgoFit::wakeUs},
                               {"bwEff", &AlgoFit::bwEff}};

// "fit.ring.shm.baseUs" = v into out->fits["ring.shm"].baseUs; false when the key is not one.
bool parseFitKey(const std::string& k, double v, CostParams* out) {
  if (k.rfind("fit.", 0) != 0) return false;
  const size_t dot = k.rfind('.');
  const std::string which = k.substr(4, dot - 4), field = k.substr(dot + 1);
  if (dot <= 4 || which.find('.') == std::string::npos) return false;
  for (const FitField& f : kFitFields)
    if (field == f.key) return out->fits[which].*f.field = v, true;
  return false;
}

// "tuned.shm.4.98304" = "tree" into out->tuned["shm.4"][98304].
Status parseTuned(const std::string& k, const std::string& v, CostParams* out) {
  const std::string rest = k.substr(6);
  const size_t d1 = rest.find('.'), d2 = rest.find('.', d1 + 1);
  const std::string tr = rest.substr(0, d1);
  char* end = nullptr;
  const std::string ranks = d1 == rest.npos ? "" : rest.substr(d1 + 1, d2 - d1 - 1);
  const std::string upTo = d2 == rest.npos ? "" : rest.substr(d2 + 1);
  const long n = std::strtol(ranks.c_str(), &end, 10);
  const bool ranksOk = !ranks.empty() && *end == 0 && n >= 1;
  const unsigned long long b = std::strtoull(upTo.c_str(), &end, 10);
  if ((tr != "shm" && tr != "tcp") || !ranksOk || upTo.empty() || *end != 0)
    return invalidArgument("cost params: '", k, "' is not tuned.<shm|tcp>.<ranks>.<upToBytes>");
  if (v.empty() || v.find_first_not_of("abcdefghijklmnopqrstuvwxyz_0123456789") != v.npos)
    return invalidArgument("cost params: bad algorithm '", v, "' for ", k);
  out->tuned[strCat(tr, ".", n)][b] = v;
  return Status();
}
}  // namespace

std::string CostParams::tunedAlgo(Transport t, int nranks, uint64_t bytes) const {
  auto it = tuned.find(strCat(transportName(t), ".", nranks));
  if (it == tuned.end()) return "";
  auto b = it->second.lower_bound(bytes);  // first bucket whose upper bound is >= bytes
  return b == it->second.end() || b->second == "model" ? "" : b->second;
}

const AlgoFit* CostParams::fit(const std::string& algo, Transport t) const {
  auto it = fits.find(strCat(algo, ".", transportName(t)));
  return it == fits.end() ? nullptr : &it->second;
}

std::string CostParams::toString() const {
  std::ostringstream os;
  for (const ParamField& f : kFields)
    os << (&f == kFields ? "" : ",") << f.key << "=" << this->*f.field;
  for (const auto& [which, fit] : fits)
    for (const FitField& f : kFitFields)
      os << ",fit." << which << "." << f.key << "=" << fit.*f.field;
  for (const auto& [which, buckets] : tuned)
    for (const auto& [upTo, algo] : buckets) os << ",tuned." << which << "." << upTo << "=" << algo;
  return os.str();
}

Status CostParams::parse(const std::string& text, CostParams* out) {
  // Accepts "k=v,k=v" and the flat JSON object {"k": v, ...}: strip JSON punctuation first.
  std::string t;
  for (char c : text) {
    if (c == '{' || c == '}' || c == '"' || c == ' ' || c == '\n' || c == '\t') continue;
    t += c == ':' ? '=' : c;
  }
  std::stringstream ss(t);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      return invalidArgument("cost params: '", item, "' is not key=value");
    std::string k = item.substr(0, eq);
    if (k.rfind("tuned.", 0) == 0) {
      LOOM_CHECK(parseTuned(k, item.substr(eq + 1), out));
      continue;
    }
    char* end = nullptr;
    double v = std::strtod(item.c_str() + eq + 1, &end);
    // cores (0: unlimited), baseUs and roundUs may be 0; only roundUs may be negative (a fit that
    // takes part of alpha back: the per-round cost never goes below 0, see price()).
    const bool fit = k.rfind("fit.", 0) == 0;
    const bool zeroOk = zeroAllowed(k) || (fit && k.find("bwEff") == k.npos);
    const bool negOk = fit && k.size() > 8 && k.compare(k.size() - 8, 8, ".roundUs") == 0;
    if (end == item.c_str() + eq + 1 || *end != 0 || (v < 0 && !negOk) || (v == 0 && !zeroOk))
      return invalidArgument("cost params: bad value for ", k);
    if ((k == "shmAlphaCpu" || k == "tcpAlphaCpu") && v > 1)
      return invalidArgument("cost params: ", k, " is a fraction (0 to 1), got ", v);
    bool found = parseFitKey(k, v, out);
    for (const ParamField& f : kFields)
      if (k == f.key) out->*f.field = v, found = true;
    if (!found) return invalidArgument("cost params: unknown key '", k, "'");
  }
  return Status();
}

}  // namespace loom::plan
