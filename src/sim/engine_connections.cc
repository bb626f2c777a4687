// Connections of the simulator's engine (engine_impl.h): one per (sender unit, send slot). A
// connection's messages go out one after another, as on loom's transports; a message that finds
// its connection busy is queued (consecutive ones as a run) and takes over the flow when the one
// before it is out, with no new rate solve.
#include <algorithm>
#include <unordered_map>

#include "sim/engine_impl.h"

namespace loom::sim::detail {

void Engine::buildConnections() {
  sendSlot_.resize(set_.numShapes());
  std::vector<uint32_t> slots(set_.numShapes());
  for (int s = 0; s < set_.numShapes(); ++s) {
    const Shape& sh = set_.shape(s);
    std::unordered_map<int32_t, uint32_t> slotOf;
    sendSlot_[s].assign(sh.steps.size(), 0);
    for (size_t i = 0; i < sh.steps.size(); ++i)
      if (sh.steps[i].op == OpKind::kSend)
        sendSlot_[s][i] =
            slotOf.emplace(sh.steps[i].peerDelta, static_cast<uint32_t>(slotOf.size()))
                .first->second;
    slots[s] = static_cast<uint32_t>(slotOf.size());
  }
  connBase_.assign(units_ + 1, 0);
  for (int u = 0; u < units_; ++u) connBase_[u + 1] = connBase_[u] + slots[unitShapeId(u)];
  conns_.assign(connBase_[units_], Conn());
  std::vector<std::vector<uint32_t>> messages(set_.numShapes());  // per shape per slot
  for (int s = 0; s < set_.numShapes(); ++s) {
    messages[s].assign(slots[s], 0);
    const Shape& sh = set_.shape(s);
    for (size_t i = 0; i < sh.steps.size(); ++i)
      if (sh.steps[i].op == OpKind::kSend) ++messages[s][sendSlot_[s][i]];
  }
  for (int u = 0; u < units_; ++u)
    for (uint32_t k = 0; k < slots[unitShapeId(u)]; ++k)
      conns_[connBase_[u] + k].messages = messages[unitShapeId(u)][k];
}

void Engine::enqueue(uint32_t conn, const FlowInfo& fi, uint32_t seq) {
  Conn& c = conns_[conn];
  if (runs_ && c.tail == kNoConn) {  // no listed message queued: the run may hold it
    if (c.runCount == 0) {
      if (c.sendList == kNoConn) {  // the connection's message lists, found once
        const SimStep& st = unitShape(fi.src).steps[fi.sendStep];
        const int32_t back = (set_.nranks() - st.peerDelta) % set_.nranks();
        c.sendList = listOf_.find(listKey(unitShapeId(fi.src), false, st.peerDelta));
        c.recvList = listOf_.find(listKey(unitShapeId(fi.dst), true, back));
      }
      c.runSeq = seq;
      c.runCount = 1;
      return;
    }
    if (seq == c.runSeq + c.runCount) {
      ++c.runCount;
      return;
    }
  }
  uint32_t q;
  if (!freeQueued_.empty()) {
    q = freeQueued_.back();
    freeQueued_.pop_back();
  } else {
    q = static_cast<uint32_t>(queued_.size());
    queued_.emplace_back();
  }
  queued_[q] = Queued{fi, kNoConn};
  if (c.tail == kNoConn) {
    c.head = q;
  } else {
    queued_[c.tail].next = q;
  }
  c.tail = q;
}

// Flow f's message is out: the next one on its connection takes the flow over. With none queued,
// the connection idles until the end of the batch (releaseIdle): a message that comes in the same
// batch still takes the flow over, which gives the same rates (the batch is solved once, after
// it) without a new flow to solve.
void Engine::nextOnConnection(uint32_t f) {
  const uint32_t conn = flowInfo_[f].conn;
  Conn& c = conns_[conn];
  if (c.runCount > 0) {  // the next of the run: rebuilt from the message lists
    const FlowInfo& cur = flowInfo_[f];
    FlowInfo next{
        cur.src, cur.dst, lists_[c.sendList + c.runSeq].step, lists_[c.recvList + c.runSeq].step, 0,
        c.path,  conn};
    next.bytes = unitShape(cur.src).steps[next.sendStep].bytes;
    ++c.runSeq;
    --c.runCount;
    takeOver(f, next);
    return;
  }
  if (c.head == kNoConn) {
    if (opt_.routing == RoutingMode::kUgal) {  // UGAL routes by live load: the flow ends now
      c.flow = kNoConn;
      mm_->removeFlow(f, now_);
      return;
    }
    c.idle = true;
    idleConns_.push_back(conn);
    return;
  }
  const uint32_t q = c.head;
  const FlowInfo next = queued_[q].info;
  c.head = queued_[q].next;
  if (c.head == kNoConn)
    c.tail = kNoConn;
  else
    __builtin_prefetch(&queued_[c.head]);  // the next dequeue, one message later
  freeQueued_.push_back(q);
  takeOver(f, next);
}

void Engine::releaseIdle() {
  for (uint32_t conn : idleConns_) {
    Conn& c = conns_[conn];
    if (!c.idle) continue;
    c.idle = false;
    const FlowInfo& fi = flowInfo_[c.flow];
    if (unitShape(fi.src).steps[fi.sendStep].seq + 1 < c.messages) {  // more to come: park
      mm_->park(c.flow);
      c.parked = true;
    } else {
      mm_->removeFlow(c.flow, now_);
      c.flow = kNoConn;
    }
  }
  idleConns_.clear();
}

void Engine::takeOver(uint32_t f, const FlowInfo& next) {
  Conn& c = conns_[next.conn];
  if (next.path == flowInfo_[f].path) {
    flowInfo_[f] = next;
    double t = mm_->refill(f, static_cast<double>(next.bytes), now_);
    if (t < MaxMin::kInf) ends_.push({t, f, mm_->version(f)});
    return;
  }
  // Another path (UGAL, or a receive reduced by the CPU): a new flow.
  mm_->removeFlow(f, now_);
  ++res_->solverFlows;
  const PathRec& p = paths_[next.path];
  uint32_t g = mm_->addFlow(p.off, p.len, static_cast<double>(next.bytes), now_);
  if (g >= flowInfo_.size()) flowInfo_.resize(g + 1);
  flowInfo_[g] = next;
  c.flow = g;
}

}  // namespace loom::sim::detail
