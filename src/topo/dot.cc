#include "topo/dot.h"

#include <map>
#include <sstream>

namespace loom::topo {

namespace {
std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}

void switchNode(std::ostringstream& o, const Fabric& f, int s, int hosts) {
  const FabricNode& n = f.nodes[s];
  const char* color = n.role == Role::kLeaf    ? "#9ecae1"
                      : n.role == Role::kSpine ? "#fdae6b"
                      : n.role == Role::kCore  ? "#e6550d"
                                               : "#dddddd";
  std::string label = n.desc;
  size_t sp = label.rfind(" Quantum");
  if (sp != std::string::npos) label.erase(sp);
  o << "  n" << s << " [label=\"" << esc(label);
  if (hosts) o << "\\n" << hosts << " hosts";
  o << "\", style=filled, fillcolor=\"" << color << "\"];\n";
}
}  // namespace

std::string toDot(const Topology& t, const DotOptions& opts) {
  const Fabric& f = t.fabric;
  std::ostringstream o;
  o << "graph fabric {\n  graph [overlap=false, splines=true, fontname=\"Helvetica\", label=\""
    << fabricTypeName(t.cls.type) << ": " << f.numSwitches << " switches, " << t.cls.hosts
    << " hosts\"];\n  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n";
  std::vector<int> hostCount(f.numSwitches, 0);
  for (const Link& l : f.links) {
    if (f.isSwitch(l.a) && !f.isSwitch(l.b)) ++hostCount[l.a];
    if (f.isSwitch(l.b) && !f.isSwitch(l.a)) ++hostCount[l.b];
  }
  std::map<int, std::vector<int>> byGroup;
  for (int s = 0; s < f.numSwitches; ++s) byGroup[f.nodes[s].group].push_back(s);
  for (auto& [g, members] : byGroup) {
    if (g >= 0) {
      o << " subgraph cluster_g" << g << " {\n  label=\"group " << g
        << "\"; style=rounded; color=\"#888888\";\n";
    }
    for (int s : members) switchNode(o, f, s, opts.hosts ? 0 : hostCount[s]);
    if (g >= 0) o << " }\n";
  }
  if (t.cls.type == FabricType::kFatTree) {
    std::map<int, std::vector<int>> byLevel;
    for (int s = 0; s < f.numSwitches; ++s) byLevel[f.nodes[s].level].push_back(s);
    for (auto& [lvl, members] : byLevel) {
      o << "  { rank=same;";
      for (int s : members) o << " n" << s << ";";
      o << " }\n";
    }
  }
  if (opts.hosts) {
    for (int id = f.numSwitches; id < f.numNodes(); ++id) {
      o << "  n" << id << " [label=\"" << esc(f.nodes[id].desc) << "\", shape=ellipse];\n";
    }
  }
  // Parallel links are drawn once with their count.
  std::map<std::pair<int, int>, std::pair<int, bool>> edges;
  for (const Link& l : f.links) {
    if (!opts.hosts && (!f.isSwitch(l.a) || !f.isSwitch(l.b))) continue;
    auto& e = edges[{std::min(l.a, l.b), std::max(l.a, l.b)}];
    ++e.first;
    e.second = e.second || l.global || !l.up;
  }
  for (auto& [ends, e] : edges) {
    bool global = f.isSwitch(ends.first) && f.isSwitch(ends.second) &&
                  f.nodes[ends.first].group != f.nodes[ends.second].group &&
                  f.nodes[ends.first].group >= 0;
    o << "  n" << ends.first << " -- n" << ends.second;
    if (global)
      o << " [color=\"#d62728\", penwidth=1.5"
        << (e.first > 1 ? ", label=\"x" + std::to_string(e.first) + "\"" : "") << "]";
    else if (e.first > 1)
      o << " [label=\"x" << e.first << "\"]";
    o << ";\n";
  }
  o << "}\n";
  return o.str();
}

}  // namespace loom::topo
