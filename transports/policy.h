// Which transport carries each pair of ranks: the one place the policy is written down (loom-info
// prints policyText()).
//
//   LOOM_TRANSPORT (or loomConfig_t.transport) = shm | tcp | ucx forces one for every pair; shm
//   only when every rank is on this rank's host, ucx only when loom was built with UCX.
//   A pair INTRA,INTER (e.g. shm,ucx) forces INTRA for pairs on one host, INTER between hosts.
//   Otherwise, per pair:
//     same host                                   -> shm
//     different hosts, UCX sees an RDMA device    -> ucx   (on both ranks: InfiniBand / RoCE,
//                                                         UCX's rc, ud or dc transports)
//     different hosts otherwise                   -> tcp
// UCX's own variables (UCX_TLS, UCX_NET_DEVICES, ...) pass through to UCX, so they also decide
// what "UCX sees an RDMA device" means.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/identity.h"
#include "core/status.h"

namespace loom::transport {

enum class Kind : uint8_t { kShm = 0, kTcp = 1, kUcx = 2 };
const char* kindName(Kind k);

// Whether this build has the UCX transport.
bool ucxBuilt();
// Whether UCX (as the environment configures it) offers an RDMA transport on this host; *what
// lists them, or says why not. Cached per process; false without UCX.
bool ucxSeesRdma(std::string* what = nullptr);

// What LOOM_TRANSPORT forces: nothing (""), one kind for every pair, or INTRA,INTER.
struct Forced {
  bool any = false;
  Kind intra = Kind::kShm, inter = Kind::kTcp;
};
// Anything else than the forms above is InvalidArgument naming `source` (e.g. "LOOM_TRANSPORT").
Status parseTransport(const std::string& s, const char* source, Forced* out);

struct Selection {
  std::vector<Kind> kindOf;  // per rank (own rank: kShm, unused)
  bool anyUcx = false;       // some pair of the communicator uses ucx (then all ranks set it up)
  bool ucxRdma = false;      // ucx was chosen because every rank sees RDMA (planner: kNet)
};

// The policy above for rank `rank`. Collective when nothing is forced and ranks span hosts (one
// allGather of every rank's RDMA flag, so both ends of a pair decide the same).
Status selectTransports(const std::string& forced, int rank, const std::vector<PeerIdentity>& ids,
                        const std::function<Status(void*, size_t)>& allGather, Selection* out);

// The policy as text, with what this build and host have (loom-info).
std::string policyText();

}  // namespace loom::transport
