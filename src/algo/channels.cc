#include "algo/channels.h"

#include <algorithm>
#include <map>

#include "algo/partition.h"
#include "algo/step_util.h"

namespace loom::algo {
namespace {

std::vector<std::vector<int>> byHost(const Group& g) {
  std::map<int, std::vector<int>> m;
  const bool have = g.hostOf.size() == static_cast<size_t>(g.nranks);
  for (int r = 0; r < g.nranks; ++r) m[have ? g.hostOf[r] : r].push_back(r);
  std::vector<std::vector<int>> out;
  out.reserve(m.size());
  for (auto& [h, ranks] : m) out.push_back(std::move(ranks));
  return out;
}

}  // namespace

std::vector<int> channelOrder(const Group& g, int c, ChannelOrder kind) {
  const std::vector<std::vector<int>> hosts = byHost(g);
  std::vector<int> order;
  order.reserve(g.nranks);
  for (size_t i = 0; i < hosts.size(); ++i) {
    const std::vector<int>& r = hosts[i];
    const int k = static_cast<int>(r.size());
    if (kind == ChannelOrder::kRotate || k < 2) {
      for (int j = 0; j < k; ++j) order.push_back(r[(j + c) % k]);
      continue;
    }
    // Snake: enter on `in`, leave from `out`, the others in rotated order between them.
    const int a = c % k, b = (c + 1) % k;
    const int in = i % 2 == 0 ? a : b, out = i % 2 == 0 ? b : a;
    order.push_back(r[in]);
    for (int j = 1; j < k; ++j) {
      const int l = (in + j) % k;
      if (l != out) order.push_back(r[l]);
    }
    order.push_back(r[out]);
  }
  return order;
}

int channelsFor(const CollArgs& a, const Group& g) {
  if (a.channels > 0) return std::min(a.channels, sched::kMaxChannels);
  int smallest = g.nranks;
  for (const std::vector<int>& h : byHost(g)) smallest = std::min<int>(smallest, h.size());
  return std::clamp(smallest, 1, sched::kMaxChannels);
}

Status buildChannels(const CollArgs& a, const Group& g, Builder inner, int k, ChannelOrder kind,
                     const char* name, Schedule* out) {
  if (a.coll != CollType::kAllReduce)
    return invalidArgument("channels: only all-reduce splits into channels, not ",
                           collName(a.coll));
  if (k < 1 || k > sched::kMaxChannels)
    return invalidArgument("channels must be in 1..", sched::kMaxChannels, ", got ", k);
  const uint64_t es = dtypeSize(a.dtype);
  *out = Schedule();
  out->rank = g.rank;
  out->nranks = g.nranks;
  out->algo = name;
  out->channels = k;
  Group sub = g;
  for (int c = 0; c < k; ++c) {
    const Range slice = piece(a.count, k, c);
    std::vector<int> order = channelOrder(g, c, kind);
    std::vector<int> pos(g.nranks);
    for (int v = 0; v < g.nranks; ++v) pos[order[v]] = v;
    if (!g.hostOf.empty()) {
      for (int v = 0; v < g.nranks; ++v) sub.hostOf[v] = g.hostOf[order[v]];
    }
    sub.rank = pos[g.rank];
    CollArgs ca = a;
    ca.count = slice.count;
    Schedule s;
    LOOM_CHECK(inner(ca, sub, &s));
    const uint32_t stepShift = static_cast<uint32_t>(out->steps.size());
    const uint32_t depShift = static_cast<uint32_t>(out->deps.size());
    const uint64_t scratchShift = out->scratchBytes;
    for (sched::Step st : s.steps) {
      if (st.peer >= 0) st.peer = order[st.peer];
      for (sched::BufRef* b : {&st.src, &st.dst}) {
        if (b->buf == sched::kBufScratch) {
          b->offset += scratchShift;
        } else if (b->buf < sched::kBufScratch) {
          b->offset += slice.first * es;
        } else {
          return invalidArgument("channels: ", s.algo, " uses buffer slot ", b->buf);
        }
      }
      st.depBegin += depShift;
      st.channel = static_cast<uint8_t>(c);
      out->steps.push_back(st);
    }
    for (uint32_t d : s.deps) out->deps.push_back(d + stepShift);
    out->scratchBytes += s.scratchBytes;
  }
  return Status();
}

}  // namespace loom::algo
