// Fabric classification: levels by BFS from host-bearing switches, then fat-tree / Dragonfly+ /
// generic decision and per-type statistics. See classify.h for the rules.
#include "topo/classify.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace loom::topo {

namespace {

constexpr int kMaxExamples = 8;

int modeOf(const std::vector<int>& v) {
  std::unordered_map<int, int> count;
  int best = 0, bestCount = -1;
  for (int x : v) {
    int c = ++count[x];
    if (c > bestCount || (c == bestCount && x > best)) {
      best = x;
      bestCount = c;
    }
  }
  return best;
}

// Adds one oddity listing the switches whose value differs from the most common one.
void deviations(const Fabric& f, const std::vector<int>& ids, const std::vector<int>& vals,
                const std::string& what, std::vector<std::string>* odd) {
  if (ids.empty()) return;
  const int m = modeOf(vals);
  int n = 0;
  std::string ex;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (vals[i] == m) continue;
    if (++n <= kMaxExamples) {
      ex += strCat(n > 1 ? "; " : "", "\"", f.nodes[ids[i]].desc, "\" (node ", ids[i], ") has ",
                   vals[i]);
    }
  }
  if (n == 0) return;
  odd->push_back(strCat(n, " switch", n > 1 ? "es" : "", " differ from the usual ", m, " ", what,
                        ": ", ex, n > kMaxExamples ? "; ..." : ""));
}

struct Ctx {
  Topology* t;
  Fabric& f;
  Classification& c;
  std::vector<int> hostLinks;  // per switch: up links to CAs
  int maxLevel = 0;
};

void fatTreeStats(Ctx& x) {
  Fabric& f = x.f;
  for (int L = 1; L <= x.maxLevel; ++L) x.c.perLevel.push_back(LevelInfo{L});
  std::vector<std::vector<int>> ids(x.maxLevel + 1), ups(x.maxLevel + 1), downs(x.maxLevel + 1);
  for (int s = 0; s < f.numSwitches; ++s) {
    int L = f.nodes[s].level;
    if (L < 1) continue;
    LevelInfo& li = x.c.perLevel[L - 1];
    ++li.switches;
    int up = 0, down = 0;
    for (int id : f.nodes[s].links) {
      const Link& l = f.links[id];
      if (!l.up) continue;
      int pl = f.nodes[l.peer(s)].level;
      if (pl == L + 1) {
        ++up;
        li.upGBps += l.gbps;
      } else if (pl == L - 1) {
        ++down;
        li.downGBps += l.gbps;
      }
    }
    li.upLinks += up;
    li.downLinks += down;
    ids[L].push_back(s);
    ups[L].push_back(up);
    downs[L].push_back(down);
  }
  for (LevelInfo& li : x.c.perLevel) {
    li.oversubscription = li.upGBps > 0 ? li.downGBps / li.upGBps : 0;
    if (li.level < x.maxLevel) {
      deviations(f, ids[li.level], ups[li.level], strCat("up links at level ", li.level),
                 &x.c.oddities);
    }
    deviations(f, ids[li.level], downs[li.level],
               strCat(li.level == 1 ? "hosts" : "down links", " at level ", li.level),
               &x.c.oddities);
  }
}

// Groups = connected components of leaf-spine links. Returns false (generic) when a same-level
// link stays inside a group or joins leaves.
bool dragonflyGroups(Ctx& x, int* numGroups) {
  Fabric& f = x.f;
  int G = 0;
  std::vector<int> stack;
  for (int s = 0; s < f.numSwitches; ++s) {
    if (f.nodes[s].group >= 0 || f.nodes[s].level < 1) continue;
    f.nodes[s].group = G;
    stack.push_back(s);
    while (!stack.empty()) {
      int u = stack.back();
      stack.pop_back();
      for (int id : f.nodes[u].links) {
        const Link& l = f.links[id];
        int v = l.peer(u);
        if (!l.up || !f.isSwitch(v) || f.nodes[v].level == f.nodes[u].level) continue;
        if (f.nodes[v].group < 0) {
          f.nodes[v].group = G;
          stack.push_back(v);
        }
      }
    }
    ++G;
  }
  for (Link& l : f.links) {
    if (!l.up || !f.isSwitch(l.a) || !f.isSwitch(l.b)) continue;
    const FabricNode &a = f.nodes[l.a], &b = f.nodes[l.b];
    if (a.level != b.level) continue;
    if (a.level != 2 || a.group == b.group) {
      x.c.oddities.push_back(strCat("same-level link inside a group or between leaves: \"", a.desc,
                                    "\"[", l.portA, "] - \"", b.desc, "\"[", l.portB,
                                    "]; not a Dragonfly+"));
      return false;
    }
    l.global = true;
  }
  *numGroups = G;
  return G >= 2;
}

void dragonflyStats(Ctx& x, int G) {
  Fabric& f = x.f;
  Classification& c = x.c;
  c.groups.assign(G, Group{});
  std::vector<int> leafIds, leafUps, leafHosts, spineIds, spineGlobals;
  for (int s = 0; s < f.numSwitches; ++s) {
    FabricNode& n = f.nodes[s];
    if (n.group < 0) continue;
    Group& g = c.groups[n.group];
    int up = 0, global = 0;
    for (int id : n.links) {
      const Link& l = f.links[id];
      if (!l.up) continue;
      if (!f.isSwitch(l.peer(s))) {
        ++g.hosts;
        g.hostGBps += l.gbps;
      } else if (l.global) {
        ++global;
        ++g.globalLinks;
        g.globalGBps += l.gbps;
      } else if (f.nodes[l.peer(s)].level > n.level) {
        ++up;
      }
    }
    if (n.level == 1) {
      g.leaves.push_back(s);
      leafIds.push_back(s);
      leafUps.push_back(up);
      leafHosts.push_back(x.hostLinks[s]);
    } else {
      g.spines.push_back(s);
      spineIds.push_back(s);
      spineGlobals.push_back(global);
    }
  }
  std::map<std::pair<int, int>, GroupPair> pairs;
  for (const Link& l : f.links) {
    if (!l.global || !l.up) continue;
    int a = std::min(f.nodes[l.a].group, f.nodes[l.b].group);
    int b = std::max(f.nodes[l.a].group, f.nodes[l.b].group);
    GroupPair& p = pairs[{a, b}];
    p.a = a;
    p.b = b;
    ++p.links;
    p.gbps += l.gbps;
  }
  for (auto& kv : pairs) c.groupPairs.push_back(kv.second);
  std::vector<int> gl, gs;
  for (const Group& g : c.groups) {
    gl.push_back(static_cast<int>(g.leaves.size()));
    gs.push_back(static_cast<int>(g.spines.size()));
  }
  auto uniform = [](const std::vector<int>& v) {
    return std::all_of(v.begin(), v.end(), [&](int y) { return y == v.front(); }) ? v.front() : 0;
  };
  c.leavesPerGroup = uniform(gl);
  c.spinesPerGroup = uniform(gs);
  c.hostsPerLeaf = modeOf(leafHosts);
  c.globalLinksPerSpine = modeOf(spineGlobals);
  if (!c.leavesPerGroup) c.oddities.push_back("groups have different numbers of leaves");
  if (!c.spinesPerGroup) c.oddities.push_back("groups have different numbers of spines");
  deviations(f, leafIds, leafHosts, "hosts per leaf", &c.oddities);
  deviations(f, leafIds, leafUps, "leaf-spine links", &c.oddities);
  deviations(f, spineIds, spineGlobals, "global links per spine", &c.oddities);
  int64_t allPairs = static_cast<int64_t>(G) * (G - 1) / 2;
  if (static_cast<int64_t>(c.groupPairs.size()) < allPairs) {
    c.oddities.push_back(strCat(allPairs - static_cast<int64_t>(c.groupPairs.size()), " of ",
                                allPairs, " group pairs have no direct global link"));
  }
  c.taper = -1;
  for (const Group& g : c.groups) {
    double r = g.hostGBps > 0 ? g.globalGBps / g.hostGBps : 0;
    if (c.taper < 0 || r < c.taper) c.taper = r;
  }
  c.tapered = c.taper < 1.0 - 1e-9;
}

// Rails: NIC k of every host (NICs ordered by name) lands only on "rail k" leaves.
void railStats(Ctx& x) {
  Fabric& f = x.f;
  int maxNics = 0;
  for (const Host& h : x.t->hosts) maxNics = std::max<int>(maxNics, h.fabricNodes.size());
  if (maxNics < 2) return;
  std::vector<int> railOf(f.numNodes(), -1);
  for (const Host& h : x.t->hosts) {
    std::vector<int> cas = h.fabricNodes;
    std::sort(cas.begin(), cas.end(),
              [&](int a, int b) { return f.nodes[a].desc < f.nodes[b].desc; });
    for (size_t r = 0; r < cas.size(); ++r) railOf[cas[r]] = static_cast<int>(r);
  }
  std::vector<int> leafRail(f.numSwitches, -1);
  bool ok = true;
  for (int s = 0; s < f.numSwitches && ok; ++s) {
    for (int id : f.nodes[s].links) {
      int p = f.links[id].peer(s);
      if (f.isSwitch(p) || railOf[p] < 0) continue;
      if (leafRail[s] >= 0 && leafRail[s] != railOf[p]) ok = false;
      leafRail[s] = railOf[p];
    }
  }
  if (!ok) {
    x.c.oddities.push_back(strCat("hosts have up to ", maxNics,
                                  " NICs but NICs of different index share leaves: no rails"));
    return;
  }
  x.c.rails = maxNics;
  for (int s = 0; s < f.numSwitches; ++s) f.nodes[s].rail = leafRail[s];
  for (int id = f.numSwitches; id < f.numNodes(); ++id) f.nodes[id].rail = railOf[id];
  for (Host& h : x.t->hosts) {
    for (Nic& n : h.nics) n.rail = n.fabricNode >= 0 ? railOf[n.fabricNode] : -1;
  }
}

}  // namespace

// BFS levels from host-bearing switches; returns the number of same-level switch links.
static int assignLevels(Ctx& x, int* unreached) {
  Fabric& f = x.f;
  std::vector<int> queue;
  queue.reserve(f.numSwitches);
  for (int s = 0; s < f.numSwitches; ++s) {
    for (int id : f.nodes[s].links) {
      if (f.links[id].up && !f.isSwitch(f.links[id].peer(s))) ++x.hostLinks[s];
    }
    if (x.hostLinks[s] > 0) {
      f.nodes[s].level = 1;
      queue.push_back(s);
    }
  }
  for (size_t qi = 0; qi < queue.size(); ++qi) {
    int u = queue[qi];
    for (int id : f.nodes[u].links) {
      int v = f.links[id].peer(u);
      if (!f.links[id].up || !f.isSwitch(v) || f.nodes[v].level >= 0) continue;
      f.nodes[v].level = f.nodes[u].level + 1;
      x.maxLevel = std::max(x.maxLevel, f.nodes[v].level);
      queue.push_back(v);
    }
  }
  if (!queue.empty()) x.maxLevel = std::max(x.maxLevel, 1);
  *unreached = f.numSwitches - static_cast<int>(queue.size());
  int same = 0;
  for (Link& l : f.links) {
    int la = f.nodes[l.a].level, lb = f.nodes[l.b].level;
    l.level = (la < 0 || lb < 0) ? -1 : std::min(la, lb);
    l.global = false;
    if (l.up && f.isSwitch(l.a) && f.isSwitch(l.b) && la == lb && la >= 0) ++same;
  }
  return same;
}

void classify(Topology* t) {
  Fabric& f = t->fabric;
  for (int id = f.numSwitches; id < f.numNodes(); ++id) {
    if (f.nodes[id].kind == NodeKind::kCa && f.nodes[id].host < 0) {
      attachHosts(t, nullptr);
      break;
    }
  }
  t->cls = Classification{};
  Ctx x{t, f, t->cls, std::vector<int>(f.numSwitches, 0)};
  Classification& c = t->cls;
  for (int id = 0; id < f.numNodes(); ++id) {
    FabricNode& n = f.nodes[id];
    bool sw = f.isSwitch(id);
    n.level = sw ? -1 : 0;
    n.role = sw ? Role::kUnknown : Role::kHost;
    n.group = -1;
    n.rail = -1;
    if (!sw && n.links.empty()) c.oddities.push_back(strCat("CA \"", n.desc, "\" has no link"));
  }
  c.switches = f.numSwitches;
  for (const Link& l : f.links) c.linksDown += l.up ? 0 : 1;
  for (const Host& h : t->hosts) c.hosts += h.fabricNodes.empty() ? 0 : 1;
  if (c.linksDown) c.oddities.push_back(strCat(c.linksDown, " links are marked down"));
  int unreached = 0;
  const int same = assignLevels(x, &unreached);
  for (int s = 0; s < f.numSwitches; ++s) {
    int L = f.nodes[s].level;
    f.nodes[s].role = L == 1   ? Role::kLeaf
                      : L == 2 ? Role::kSpine
                      : L >= 3 ? Role::kCore
                               : Role::kUnknown;
  }
  if (unreached) {
    c.oddities.push_back(strCat(unreached, " switches are not connected to any switch with hosts"));
  }
  c.levels = x.maxLevel;
  int groups = 0;
  if (f.numSwitches == 0) {
    c.type = FabricType::kNone;
  } else if (same == 0 && unreached == 0) {
    c.type = FabricType::kFatTree;
    fatTreeStats(x);
  } else if (x.maxLevel == 2 && unreached == 0 && dragonflyGroups(x, &groups)) {
    c.type = FabricType::kDragonflyPlus;
    for (Link& l : f.links) l.level = l.global ? 2 : l.level;
    dragonflyStats(x, groups);
  } else {
    c.type = FabricType::kGeneric;
    for (int s = 0; s < f.numSwitches; ++s) f.nodes[s].group = -1;
    for (Link& l : f.links) l.global = false;
    if (same) c.oddities.push_back(strCat(same, " links join switches of the same level"));
  }
  railStats(x);
}

}  // namespace loom::topo
