// Point-to-point: one message straight to (or from) the peer; the transport streams it.
#include "algo/registry.h"

namespace loom::algo {

namespace {
void init(const Group& g, Schedule* out) {
  *out = Schedule();
  out->rank = g.rank;
  out->nranks = g.nranks;
  out->algo = "direct";
}
}  // namespace

Status buildSendDirect(const CollArgs& a, const Group& g, Schedule* out) {
  init(g, out);
  out->send(a.peer, {sched::kBufSend, 0}, a.count * dtypeSize(a.dtype));
  return Status();
}

Status buildRecvDirect(const CollArgs& a, const Group& g, Schedule* out) {
  init(g, out);
  out->recv(a.peer, {sched::kBufRecv, 0}, a.count * dtypeSize(a.dtype));
  return Status();
}

}  // namespace loom::algo
