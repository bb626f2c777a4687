// Point-to-point: one message straight to (or from) the peer; the transport streams it.
#include "algo/partition.h"
#include "algo/registry.h"

namespace loom::algo {

Status buildSendDirect(const CollArgs& a, const Group& g, Schedule* out) {
  startSchedule(g, "direct", out);
  out->send(a.peer, {sched::kBufSend, 0}, a.count * dtypeSize(a.dtype));
  return Status();
}

Status buildRecvDirect(const CollArgs& a, const Group& g, Schedule* out) {
  startSchedule(g, "direct", out);
  out->recv(a.peer, {sched::kBufRecv, 0}, a.count * dtypeSize(a.dtype));
  return Status();
}

}  // namespace loom::algo
