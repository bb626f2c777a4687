#include "core/call_desc.h"

#include "core/datatype.h"

namespace loom {
namespace {

// Names of sched::CollType (core cannot include sched; tests/sched check the two agree).
constexpr const char* kCollNames[] = {"allreduce",     "broadcast", "reduce",  "allgather",
                                      "reducescatter", "alltoall",  "send",    "recv",
                                      "barrier",       "gather",    "scatter", "alltoallv"};

}  // namespace

std::string describeCall(const CallDesc& d) {
  if (!d.checked) return "an unchecked call (point-to-point or grouped)";
  const size_t n = sizeof(kCollNames) / sizeof(kCollNames[0]);
  std::string out = d.coll < n ? kCollNames[d.coll] : strCat("collective#", int(d.coll));
  if (d.coll == 8) return out + "()";  // barrier
  out += strCat("(count=", d.count, ", ");
  if (validDataType(d.dtype))
    out += dtypeName(static_cast<DataType>(d.dtype));
  else
    out += strCat("datatype#", int(d.dtype));
  if (d.op != 0xff) out += strCat(", ", validRedOp(d.op) ? opName(static_cast<RedOp>(d.op)) : "?");
  if (d.root >= 0) out += strCat(", root=", d.root);
  return out + ")";
}

Status callMismatch(int rankA, const CallDesc& a, int rankB, const CallDesc& b, const char* where) {
  std::string seq = a.seq == b.seq ? strCat(" (call #", a.seq, " of both)")
                                   : strCat(" (call #", a.seq, " of rank ", rankA, ", call #",
                                            b.seq, " of rank ", rankB, ")");
  return invalidUsage(kCallMismatch, "rank ", rankA, " called ", describeCall(a), " but rank ",
                      rankB, " called ", describeCall(b), seq, "; seen by ", where);
}

}  // namespace loom
