// The transport selection policy (see policy.h).
#include "transports/policy.h"

#include "transports/transport.h"
#ifdef LOOM_HAVE_UCX
#include "transports/ucx/transport.h"
#endif

namespace loom::transport {

const char* kindName(Kind k) {
  switch (k) {
    case Kind::kShm:
      return "shm";
    case Kind::kTcp:
      return "tcp";
    case Kind::kUcx:
      return "ucx";
  }
  return "?";
}

#ifdef LOOM_HAVE_UCX
bool ucxBuilt() { return true; }
bool ucxSeesRdma(std::string* what) { return ucx::seesRdma(what); }
#else
bool ucxBuilt() { return false; }
bool ucxSeesRdma(std::string* what) {
  if (what != nullptr) *what = "loom was built without UCX";
  return false;
}
Status createUcxTransport(const SetupArgs& args, std::unique_ptr<Transport>* out) {
  return invalidUsage(
      "the ucx transport is not available: loom was built without UCX "
      "(install libucx-dev and reconfigure)");
}
#endif

namespace {

Status parseKind(const std::string& s, const char* source, const std::string& whole, Kind* kind) {
  for (Kind k : {Kind::kShm, Kind::kTcp, Kind::kUcx}) {
    if (s != kindName(k)) continue;
    *kind = k;
    if (k == Kind::kUcx && !ucxBuilt())
      return invalidArgument(source, " '", whole, "' asks for ucx but loom was built without UCX");
    return Status();
  }
  return invalidArgument(source, " '", whole,
                         "' is not one of shm, tcp, ucx or a pair INTRA,INTER such as shm,ucx");
}

}  // namespace

Status parseTransport(const std::string& s, const char* source, Forced* out) {
  *out = Forced();
  if (s.empty()) return Status();
  out->any = true;
  const size_t comma = s.find(',');
  if (comma == std::string::npos) {
    LOOM_CHECK(parseKind(s, source, s, &out->intra));
    out->inter = out->intra;
    return Status();
  }
  LOOM_CHECK(parseKind(s.substr(0, comma), source, s, &out->intra));
  LOOM_CHECK(parseKind(s.substr(comma + 1), source, s, &out->inter));
  if (out->inter == Kind::kShm)
    return invalidArgument(source, " '", s, "': shm cannot carry pairs on different hosts");
  return Status();
}

Status selectTransports(const std::string& forced, int rank, const std::vector<PeerIdentity>& ids,
                        const std::function<Status(void*, size_t)>& allGather, Selection* out) {
  const int n = static_cast<int>(ids.size());
  Forced f;
  LOOM_CHECK(parseTransport(forced, "LOOM_TRANSPORT", &f));
  out->kindOf.assign(n, Kind::kShm);
  out->anyUcx = false;
  out->ucxRdma = false;
  // Global facts (the same on every rank): do ranks span hosts, does some host hold two ranks.
  std::vector<int> perHost;
  for (const auto& id : ids) {
    const int h = id.hostIndex >= 0 ? id.hostIndex : 0;
    if (static_cast<int>(perHost.size()) <= h) perHost.resize(h + 1, 0);
    ++perHost[h];
  }
  int hosts = 0;
  bool sharedHost = false;
  for (int c : perHost) {
    hosts += c > 0 ? 1 : 0;
    sharedHost = sharedHost || c > 1;
  }
  const bool spans = hosts > 1;
  // Inter-host choice: forced, or ucx when every rank sees RDMA (one gather, on all ranks or none).
  Kind inter = f.inter;
  if (!f.any) {
    bool rdma = false;
    if (spans && ucxBuilt()) {
      std::vector<uint8_t> flags(n, 0);
      flags[rank] = ucxSeesRdma() ? 1 : 0;
      LOOM_CHECK(allGather(flags.data(), 1));
      rdma = true;
      for (uint8_t x : flags) rdma = rdma && x != 0;
    }
    inter = rdma ? Kind::kUcx : Kind::kTcp;
    out->ucxRdma = rdma;
  }
  const Kind intra = f.any ? f.intra : Kind::kShm;
  for (int q = 0; q < n; ++q) {
    if (q == rank) continue;
    const bool same = ids[q].sameHostAs(ids[rank]);
    if (!same && inter == Kind::kShm)
      return invalidUsage("transport shm forced but ", ids[q].describe(),
                          " is on another host than this rank (", ids[rank].hostname, ")");
    out->kindOf[q] = same ? intra : inter;
  }
  out->anyUcx = (spans && inter == Kind::kUcx) || (sharedHost && intra == Kind::kUcx);
  return Status();
}

std::string policyText() {
  std::string what;
  bool rdma = ucxSeesRdma(&what);
  std::string s =
      "transport selection (LOOM_TRANSPORT=shm|tcp|ucx forces one for every pair, INTRA,INTER\n"
      "such as shm,ucx one inside hosts and one between them):\n"
      "  same host                              -> shm\n"
      "  other host, UCX sees an RDMA device    -> ucx\n"
      "  other host, otherwise                  -> tcp\n";
  s += strCat("  ucx transport built: ", ucxBuilt() ? "yes" : "no", "\n");
  if (ucxBuilt()) s += strCat("  UCX sees RDMA here: ", rdma ? "yes (" + what + ")" : "no", "\n");
  return s;
}

}  // namespace loom::transport
