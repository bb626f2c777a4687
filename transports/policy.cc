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
  return invalidUsage("the ucx transport is not available: loom was built without UCX "
                      "(install libucx-dev and reconfigure)");
}
#endif

Status parseTransport(const std::string& s, const char* source, bool* forced, Kind* kind) {
  *forced = !s.empty();
  if (s.empty()) return Status();
  for (Kind k : {Kind::kShm, Kind::kTcp, Kind::kUcx}) {
    if (s == kindName(k)) {
      *kind = k;
      if (k == Kind::kUcx && !ucxBuilt())
        return invalidArgument(source, " is 'ucx' but loom was built without UCX");
      return Status();
    }
  }
  return invalidArgument(source, " '", s, "' is not one of shm, tcp, ucx");
}

Status selectTransports(const std::string& forced, int rank, const std::vector<PeerIdentity>& ids,
                        const std::function<Status(void*, size_t)>& allGather, Selection* out) {
  const int n = static_cast<int>(ids.size());
  bool isForced = false;
  Kind kind = Kind::kShm;
  LOOM_CHECK(parseTransport(forced, "LOOM_TRANSPORT", &isForced, &kind));
  out->kindOf.assign(n, Kind::kShm);
  out->anyUcx = false;
  out->ucxRdma = false;
  bool spans = false;
  for (int q = 0; q < n; ++q) spans = spans || !ids[q].sameHostAs(ids[rank]);
  if (isForced) {
    for (int q = 0; q < n; ++q) {
      if (kind == Kind::kShm && !ids[q].sameHostAs(ids[rank]))
        return invalidUsage("transport shm forced but ", ids[q].describe(),
                            " is on another host than this rank (", ids[rank].hostname, ")");
      if (q != rank) out->kindOf[q] = kind;
    }
    out->anyUcx = kind == Kind::kUcx && n > 1;
    return Status();
  }
  // Whether ranks span hosts is the same on every rank (same ids), so either all gather or none.
  bool rdma = false;
  if (spans && ucxBuilt()) {
    std::vector<uint8_t> flags(n, 0);
    flags[rank] = ucxSeesRdma() ? 1 : 0;
    LOOM_CHECK(allGather(flags.data(), 1));
    rdma = true;
    for (uint8_t f : flags) rdma = rdma && f != 0;
  }
  for (int q = 0; q < n; ++q) {
    if (q == rank || ids[q].sameHostAs(ids[rank])) continue;
    out->kindOf[q] = rdma ? Kind::kUcx : Kind::kTcp;
  }
  out->anyUcx = rdma;
  out->ucxRdma = rdma;
  return Status();
}

std::string policyText() {
  std::string what;
  bool rdma = ucxSeesRdma(&what);
  std::string s =
      "transport selection (LOOM_TRANSPORT=shm|tcp|ucx forces one for every pair):\n"
      "  same host                              -> shm\n"
      "  other host, UCX sees an RDMA device    -> ucx\n"
      "  other host, otherwise                  -> tcp\n";
  s += strCat("  ucx transport built: ", ucxBuilt() ? "yes" : "no", "\n");
  if (ucxBuilt())
    s += strCat("  UCX sees RDMA here: ", rdma ? "yes (" + what + ")" : "no", "\n");
  return s;
}

}  // namespace loom::transport
