#include "sim/channels.h"

#include <map>

namespace loom::sim {

std::vector<int> channelOrder(int nranks, const std::vector<int>& hostOf, int c) {
  std::map<int, std::vector<int>> byHost;  // host order = first appearance order of host ids
  for (int r = 0; r < nranks; ++r) byHost[hostOf.empty() ? r : hostOf[r]].push_back(r);
  std::vector<int> order;
  order.reserve(nranks);
  for (const auto& [h, ranks] : byHost) {
    int k = static_cast<int>(ranks.size());
    for (int i = 0; i < k; ++i) order.push_back(ranks[(i + c) % k]);
  }
  return order;
}

Status buildChannels(const RankBuildFn& build, const sched::CollArgs& args, int nranks,
                     const std::vector<int>& hostOf, int channels, ScheduleSet* out) {
  if (channels < 1) return invalidArgument("channels must be >= 1, got ", channels);
  std::vector<std::vector<int>> order(channels), pos(channels, std::vector<int>(nranks));
  std::vector<std::vector<int>> vhost(channels, std::vector<int>(nranks));
  for (int c = 0; c < channels; ++c) {
    order[c] = channelOrder(nranks, hostOf, c);
    for (int v = 0; v < nranks; ++v) {
      pos[c][order[c][v]] = v;
      vhost[c][v] = hostOf.empty() ? order[c][v] : hostOf[order[c][v]];
    }
  }
  for (int r = 0; r < nranks; ++r) {
    sched::Schedule all;
    all.rank = r;
    all.nranks = nranks;
    for (int c = 0; c < channels; ++c) {
      sched::CollArgs a = args;
      a.count = args.count / channels + (c == channels - 1 ? args.count % channels : 0);
      sched::Group g;
      g.rank = pos[c][r];
      g.nranks = nranks;
      g.hostOf = vhost[c];
      sched::Schedule s;
      Status st = build(a, g, &s);
      if (!st.ok())
        return Status(st.code(), strCat("channel ", c, " rank ", r, ": ", st.message()));
      for (sched::Step& step : s.steps)
        if (step.peer >= 0) step.peer = order[c][step.peer];
      s.rank = r;
      if (c == 0) {
        all = std::move(s);
      } else {
        all.append(s);
      }
    }
    if (out->algo.empty()) out->algo = strCat(all.algo, "x", channels);
    LOOM_CHECK(out->add(all));
  }
  return out->complete();
}

}  // namespace loom::sim
