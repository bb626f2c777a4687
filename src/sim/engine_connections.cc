// Connections of the simulator's engine (engine_impl.h): one per (sender unit, send slot). A
// connection's messages go out one after another, as on loom's transports; a message that finds
// its connection busy is queued (consecutive ones as a run) and takes over the flow when the one
// before it is out, with no new rate solve.
#include <algorithm>
#include <unordered_map>

#include "sim/engine_impl.h"

namespace loom::sim::detail {

void Engine::buildConnections() {
  // Slots per shape: its distinct send and receive deltas (SimStep::slot numbers them).
  std::vector<uint32_t> slots[2];
  std::vector<std::vector<uint32_t>> messages(set_.numShapes());  // per shape per send slot
  for (int d = 0; d < 2; ++d) slots[d].assign(set_.numShapes(), 0);
  for (int s = 0; s < set_.numShapes(); ++s) {
    for (const SimStep& st : set_.shape(s).steps) {
      if (st.op == OpKind::kCopy || st.op == OpKind::kReduce) continue;
      const int d = st.op == OpKind::kSend ? 0 : 1;
      slots[d][s] = std::max(slots[d][s], st.slot + 1);
      if (d == 0) {
        if (messages[s].size() <= st.slot) messages[s].resize(st.slot + 1, 0);
        ++messages[s][st.slot];
      }
    }
  }
  connBase_.assign(units_ + 1, 0);
  inBase_.assign(units_ + 1, 0);
  for (int u = 0; u < units_; ++u) {
    connBase_[u + 1] = connBase_[u] + slots[0][unitShapeId(u)];
    inBase_[u + 1] = inBase_[u] + slots[1][unitShapeId(u)];
  }
  conns_.assign(connBase_[units_], Conn());
  inConn_.assign(inBase_[units_], kNoConn);
  // Per shape per send slot its delta (from the first send step of the slot).
  std::vector<std::vector<int32_t>> deltaOf(set_.numShapes());
  for (int s = 0; s < set_.numShapes(); ++s) {
    deltaOf[s].assign(slots[0][s], 0);
    for (const SimStep& st : set_.shape(s).steps)
      if (st.op == OpKind::kSend) deltaOf[s][st.slot] = st.peerDelta;
  }
  const int n = set_.nranks();
  for (int u = 0; u < units_; ++u) {
    const int shape = unitShapeId(u);
    for (uint32_t k = 0; k < slots[0][shape]; ++k) {
      Conn& c = conns_[connBase_[u] + k];
      c.messages = messages[shape][k];
      c.src = u;
      c.delta = deltaOf[shape][k];
      const int64_t peerRank = (int64_t{unitRank(u)} + c.delta) % n;
      c.dst = unitOf(static_cast<int>(peerRank));
      const int32_t back = (n - c.delta) % n;
      c.sendList = listOf_.find(listKey(shape, false, c.delta));
      // The receiver's list as the peer rank itself has it: folded, the peer may be another member
      // of its class than the representative, with the same skeleton (the same step numbers) but
      // other deltas (fold.h).
      c.recvList =
          listOf_.find(listKey(set_.shapeIdOfRank(static_cast<int>(peerRank)), true, back));
      if (c.recvList == FlatMap::kNone) {
        c.recvList = kNoConn;
        continue;
      }
      c.recvLen = listLen_[c.recvList];
      const uint32_t recvSlot = stepOf(c.dst, lists_[c.recvList]).slot;
      inConn_[inBase_[c.dst] + recvSlot] = connBase_[u] + k;
    }
  }
}

void Engine::enqueue(uint32_t conn, const FlowInfo& fi, uint32_t seq) {
  Conn& c = conns_[conn];
  if (runs_ && c.tail == kNoConn) {  // no listed message queued: the run may hold it
    if (c.runCount == 0) {
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
    FlowInfo next{cur.src, cur.dst, lists_[c.sendList + c.runSeq], lists_[c.recvList + c.runSeq], 0,
                  c.path,  conn};
    next.bytes = stepOf(cur.src, next.sendStep).bytes;
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
    if (stepOf(fi.src, fi.sendStep).seq + 1 < c.messages) {  // more to come: park
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
