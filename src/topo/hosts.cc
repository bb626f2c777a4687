// CA -> host mapping and fabric comparison.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <unordered_map>

#include "topo/classify.h"

namespace loom::topo {

Status loadHostMap(const std::string& path, HostMap* out) {
  std::ifstream in(path);
  if (!in) return errnoStatus("cannot open host map file " + path, errno);
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    size_t b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '#') continue;
    size_t e = line.find_first_of(" \t", b);
    std::string guid = line.substr(b, e == std::string::npos ? std::string::npos : e - b);
    char* end = nullptr;
    errno = 0;
    uint64_t g = std::strtoull(guid.c_str(), &end, 16);
    if (errno != 0 || *end != '\0' || guid.empty()) {
      return invalidArgument(path, ":", lineNo, ": expected a hex GUID first, got \"", guid, "\"");
    }
    size_t nb = e == std::string::npos ? std::string::npos : line.find_first_not_of(" \t", e);
    if (nb == std::string::npos) {
      return invalidArgument(path, ":", lineNo, ": expected a hostname after the GUID");
    }
    std::string name = line.substr(nb);
    while (!name.empty() && (name.back() == '\r' || name.back() == ' ')) name.pop_back();
    if (name.size() >= 2 && name.front() == '"' && name.back() == '"') {
      name = name.substr(1, name.size() - 2);
    }
    if (name.empty()) return invalidArgument(path, ":", lineNo, ": empty hostname");
    out->byGuid[g] = name;
  }
  return Status();
}

void attachHosts(Topology* t, const HostMap* map) {
  Fabric& f = t->fabric;
  std::unordered_map<std::string, int> byName;
  for (int h = 0; h < static_cast<int>(t->hosts.size()); ++h) {
    Host& host = t->hosts[h];
    byName[host.name] = h;
    host.fabricNodes.clear();
    for (Nic& n : host.nics) n.fabricNode = -1;
  }
  for (int id = f.numSwitches; id < f.numNodes(); ++id) {
    FabricNode& n = f.nodes[id];
    if (n.kind != NodeKind::kCa) continue;
    std::string hostName, dev;
    const std::string* mapped = nullptr;
    if (map) {
      auto it = map->byGuid.find(n.guid);
      if (it != map->byGuid.end()) mapped = &it->second;
    }
    if (mapped) {
      hostName = *mapped;
      dev = n.desc;
    } else {
      size_t sp = n.desc.find(' ');
      hostName = n.desc.substr(0, sp);
      if (sp != std::string::npos) dev = n.desc.substr(sp + 1);
    }
    if (hostName.empty()) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "ca-%016llx", static_cast<unsigned long long>(n.guid));
      hostName = buf;
    }
    auto [pos, fresh] = byName.emplace(hostName, static_cast<int>(t->hosts.size()));
    if (fresh) {
      t->hosts.emplace_back();
      t->hosts.back().name = hostName;
    }
    n.host = pos->second;
    Host& host = t->hosts[n.host];
    host.fabricNodes.push_back(id);
    double gbps = n.links.empty() ? 0 : f.links[n.links.front()].gbps;
    auto nic = std::find_if(host.nics.begin(), host.nics.end(), [&](const Nic& x) {
      return (!dev.empty() && x.name == dev) || (x.nodeGuid != 0 && x.nodeGuid == n.guid);
    });
    if (nic == host.nics.end()) {
      Nic x;
      x.index = static_cast<int>(host.nics.size());
      x.name = dev.empty() ? "ca" + std::to_string(x.index) : dev;
      host.nics.push_back(x);
      nic = host.nics.end() - 1;
    }
    nic->fabricNode = id;
    if (nic->nodeGuid == 0) nic->nodeGuid = n.guid;
    if (nic->portGBps == 0) nic->portGBps = gbps;
  }
}

namespace {
uint64_t portKey(uint64_t guid, int port) { return guid * 257 + static_cast<uint64_t>(port); }

// Node descriptions as keys, or the first description two nodes share (then "" is returned in
// *dup's place and the map is unusable).
std::unordered_map<std::string, int> byDesc(const Fabric& f, std::string* dup) {
  std::unordered_map<std::string, int> m;
  for (int i = 0; i < f.numNodes(); ++i) {
    if (f.nodes[i].links.empty()) continue;
    if (!m.emplace(f.nodes[i].desc, i).second && dup->empty()) *dup = f.nodes[i].desc;
  }
  return m;
}
}  // namespace

Status compareFabrics(const Fabric& expected, const Fabric& found, FabricDiff* out) {
  bool guids = true;
  for (const FabricNode& n : expected.nodes) guids = guids && n.guid != 0;
  *out = FabricDiff();
  if (guids) {
    out->missing = missingLinks(expected, found, &out->unexpected);
    return Status();
  }
  // An ibsim net file names nodes without GUIDs ("Switch1"); ibsim gives each node that name
  // as its description, so match by description and port.
  out->byName = true;
  std::string dupE, dupF;
  auto e = byDesc(expected, &dupE);
  auto f = byDesc(found, &dupF);
  if (e.count("") || !dupE.empty())
    return invalidArgument("expected fabric: nodes have no GUIDs and their names are not unique (",
                           dupE.empty() ? "a node without a name" : "\"" + dupE + "\"",
                           "), so links cannot be matched; give GUIDs (ibnetdiscover form)");
  if (!dupF.empty())
    return invalidArgument("found fabric: two nodes are named \"", dupF,
                           "\", so links cannot be matched by name against a fabric without GUIDs");
  std::unordered_map<int, int> to;  // expected node -> found node
  for (const auto& [name, i] : e) {
    auto it = f.find(name);
    if (it != f.end()) to[i] = it->second;
  }
  std::unordered_map<uint64_t, uint64_t> have;
  for (const Link& l : found.links) {
    if (!l.up) continue;
    have[portKey(l.a, l.portA)] = portKey(l.b, l.portB);
    have[portKey(l.b, l.portB)] = portKey(l.a, l.portA);
  }
  int matched = 0;
  for (const Link& l : expected.links) {
    if (!l.up) continue;
    auto a = to.find(l.a), b = to.find(l.b);
    if (a != to.end() && b != to.end()) {
      auto it = have.find(portKey(a->second, l.portA));
      if (it != have.end() && it->second == portKey(b->second, l.portB)) {
        ++matched;
        continue;
      }
    }
    out->missing.push_back(strCat(expected.nodes[l.a].desc, "[", l.portA, "] - ",
                                  expected.nodes[l.b].desc, "[", l.portB, "]"));
  }
  int upFound = 0;
  for (const Link& l : found.links) upFound += l.up ? 1 : 0;
  out->unexpected = upFound - matched;
  return Status();
}

std::vector<std::string> missingLinks(const Fabric& expected, const Fabric& found,
                                      int* unexpected) {
  std::unordered_map<uint64_t, uint64_t> have;  // (guid,port) -> (peer guid, peer port) key
  have.reserve(found.links.size() * 2);
  for (const Link& l : found.links) {
    if (!l.up) continue;
    uint64_t a = portKey(found.nodes[l.a].guid, l.portA);
    uint64_t b = portKey(found.nodes[l.b].guid, l.portB);
    have[a] = b;
    have[b] = a;
  }
  std::vector<std::string> out;
  int matched = 0;
  for (const Link& l : expected.links) {
    if (!l.up) continue;
    uint64_t a = portKey(expected.nodes[l.a].guid, l.portA);
    uint64_t b = portKey(expected.nodes[l.b].guid, l.portB);
    auto it = have.find(a);
    if (it != have.end() && it->second == b) {
      ++matched;
      continue;
    }
    out.push_back(strCat(expected.nodes[l.a].desc, "[", l.portA, "] - ", expected.nodes[l.b].desc,
                         "[", l.portB, "]"));
  }
  if (unexpected) {
    int upFound = 0;
    for (const Link& l : found.links) upFound += l.up ? 1 : 0;
    *unexpected = upFound - matched;
  }
  return out;
}

}  // namespace loom::topo
