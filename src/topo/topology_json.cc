// Topology <-> JSON (nlohmann-json). Every field of topology.h is written, so fromJson(toJson(t))
// reproduces t exactly (doubles are printed with round-trip precision). On reading, missing
// optional fields keep their defaults so hand-written fixtures stay short; a wrong type or a
// syntax error names the source, the line (syntax) or the JSON path (schema) and what was
// expected. Exceptions from nlohmann never leave this file.
#define JSON_DIAGNOSTICS 1
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <type_traits>

#include "topo/topology.h"

namespace loom::topo {

using nlohmann::json;

namespace {

constexpr int kSchemaVersion = 1;

std::string hex64(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%016" PRIx64, v);
  return buf;
}

// Thrown inside this file only: a schema error at a JSON path.
struct SchemaError {
  std::string path;
  std::string what;
};

// Integers are range-checked (nlohmann's own conversion of 1e80 to int is undefined behaviour).
template <typename T>
T checkedInt(const json& v, const std::string& path) {
  bool ok = v.is_number_integer();
  if (ok && v.is_number_unsigned()) {
    ok = v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max());
  } else if (ok) {
    int64_t x = v.get<int64_t>();
    ok =
        x >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
        (x < 0 || static_cast<uint64_t>(x) <= static_cast<uint64_t>(std::numeric_limits<T>::max()));
  }
  if (!ok)
    throw SchemaError{path, strCat("expected an integer that fits ", sizeof(T) * 8, " bits")};
  return v.is_number_unsigned() ? static_cast<T>(v.get<uint64_t>())
                                : static_cast<T>(v.get<int64_t>());
}

template <typename T>
void convert(const json& v, T* out, const std::string& path) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) throw SchemaError{path, "expected true or false"};
    *out = v.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    *out = checkedInt<T>(v, path);
  } else if constexpr (std::is_same_v<T, double>) {
    if (!v.is_number()) throw SchemaError{path, "expected a number"};
    *out = v.get<double>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) throw SchemaError{path, "expected a string"};
    *out = v.get<std::string>();
  } else {  // std::vector<...>
    if (!v.is_array()) throw SchemaError{path, "expected an array"};
    out->clear();
    out->reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      typename T::value_type x{};
      convert(v[i], &x, path + "/" + std::to_string(i));
      out->push_back(std::move(x));
    }
  }
}

template <typename T>
void rd(const json& j, const char* key, T* out, const std::string& path) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  convert(*it, out, path + "/" + key);
}

const json& need(const json& j, const char* key, json::value_t type, const std::string& path) {
  auto it = j.find(key);
  if (it == j.end()) throw SchemaError{path + "/" + key, "missing"};
  if (it->type() != type && !(type == json::value_t::number_integer && it->is_number_integer())) {
    throw SchemaError{path + "/" + key, std::string("wrong type (") + it->type_name() + ")"};
  }
  return *it;
}

uint64_t rdGuid(const json& j, const char* key, const std::string& path) {
  auto it = j.find(key);
  if (it == j.end()) return 0;
  if (it->is_number_unsigned()) return it->get<uint64_t>();
  if (!it->is_string()) throw SchemaError{path + "/" + key, "expected a hex string \"0x...\""};
  const std::string& s = it->get_ref<const std::string&>();
  errno = 0;
  char* end = nullptr;
  uint64_t v = std::strtoull(s.c_str(), &end, 16);
  if (s.empty() || errno != 0 || *end != '\0') {
    throw SchemaError{path + "/" + key, "expected a hex string \"0x...\", got \"" + s + "\""};
  }
  return v;
}

template <typename E, typename Parse>
void rdEnum(const json& j, const char* key, E* out, const std::string& path, Parse parse,
            const char* expected) {
  auto it = j.find(key);
  if (it == j.end()) return;
  if (!it->is_string() || !parse(it->get<std::string>(), out)) {
    throw SchemaError{path + "/" + key, std::string("expected one of ") + expected};
  }
}

bool parseKind(const std::string& s, NodeKind* k) {
  for (int i = 0; i <= 2; ++i) {
    if (s == nodeKindName(static_cast<NodeKind>(i))) return *k = static_cast<NodeKind>(i), true;
  }
  return false;
}
bool parseRole(const std::string& s, Role* r) {
  for (int i = 0; i <= 4; ++i) {
    if (s == roleName(static_cast<Role>(i))) return *r = static_cast<Role>(i), true;
  }
  return false;
}

// ---------------------------------------------------------------- writing

json pciJson(const PciDevice& p) {
  return {{"busId", p.busId},     {"vendor", p.vendorId},   {"device", p.deviceId},
          {"class", p.classId},   {"linkGBps", p.linkGBps}, {"numa", p.numa},
          {"package", p.package}, {"pciPath", p.pciPath}};
}

json pathJson(const DevicePath& p) {
  return {{"a", p.a},
          {"b", p.b},
          {"class", pathClassName(p.cls)},
          {"gbps", p.gbps},
          {"nvlinks", p.nvlinks}};
}

json hostJson(const Host& h) {
  json j = {{"name", h.name},
            {"packages", h.packages},
            {"cores", h.cores},
            {"pus", h.pus},
            {"pciSwitches", h.pciSwitches},
            {"nvswitches", h.nvswitches},
            {"fabricNodes", h.fabricNodes}};
  json numa = json::array(), gpus = json::array(), nics = json::array();
  for (const NumaNode& n : h.numa) {
    numa.push_back({{"os", n.osIndex},
                    {"package", n.package},
                    {"memoryBytes", n.memoryBytes},
                    {"cpus", n.cpus},
                    {"cores", n.cores}});
  }
  for (const Gpu& g : h.gpus) {
    gpus.push_back({{"index", g.index},
                    {"name", g.name},
                    {"cudaDevice", g.cudaDevice},
                    {"pci", pciJson(g.pci)}});
  }
  for (const Nic& n : h.nics) {
    nics.push_back({{"index", n.index},
                    {"name", n.name},
                    {"netdevs", n.netdevs},
                    {"nodeGuid", hex64(n.nodeGuid)},
                    {"portGBps", n.portGBps},
                    {"fabricNode", n.fabricNode},
                    {"rail", n.rail},
                    {"pci", pciJson(n.pci)}});
  }
  json gn = json::array(), gg = json::array();
  for (const DevicePath& p : h.gpuNic) gn.push_back(pathJson(p));
  for (const DevicePath& p : h.gpuGpu) gg.push_back(pathJson(p));
  j["numa"] = std::move(numa);
  j["gpus"] = std::move(gpus);
  j["nics"] = std::move(nics);
  j["gpuNic"] = std::move(gn);
  j["gpuGpu"] = std::move(gg);
  return j;
}

json fabricJson(const Fabric& f) {
  json nodes = json::array(), links = json::array();
  for (const FabricNode& n : f.nodes) {
    nodes.push_back({{"kind", nodeKindName(n.kind)},
                     {"guid", hex64(n.guid)},
                     {"desc", n.desc},
                     {"nports", n.nports},
                     {"lid", n.lid},
                     {"role", roleName(n.role)},
                     {"level", n.level},
                     {"group", n.group},
                     {"rail", n.rail},
                     {"host", n.host}});
  }
  for (const Link& l : f.links) {
    links.push_back({{"a", l.a},
                     {"portA", l.portA},
                     {"b", l.b},
                     {"portB", l.portB},
                     {"width", l.width},
                     {"speed", l.speed},
                     {"gbps", l.gbps},
                     {"level", l.level},
                     {"global", l.global},
                     {"up", l.up}});
  }
  return {{"source", f.source},
          {"numSwitches", f.numSwitches},
          {"nodes", std::move(nodes)},
          {"links", std::move(links)}};
}

json classJson(const Classification& c) {
  json levels = json::array(), groups = json::array(), pairs = json::array();
  for (const LevelInfo& l : c.perLevel) {
    levels.push_back({{"level", l.level},
                      {"switches", l.switches},
                      {"downLinks", l.downLinks},
                      {"upLinks", l.upLinks},
                      {"downGBps", l.downGBps},
                      {"upGBps", l.upGBps},
                      {"oversubscription", l.oversubscription}});
  }
  for (const Group& g : c.groups) {
    groups.push_back({{"leaves", g.leaves},
                      {"spines", g.spines},
                      {"hosts", g.hosts},
                      {"globalLinks", g.globalLinks},
                      {"globalGBps", g.globalGBps},
                      {"hostGBps", g.hostGBps}});
  }
  for (const GroupPair& p : c.groupPairs) {
    pairs.push_back({{"a", p.a}, {"b", p.b}, {"links", p.links}, {"gbps", p.gbps}});
  }
  return {{"type", fabricTypeName(c.type)},
          {"levels", c.levels},
          {"perLevel", std::move(levels)},
          {"rails", c.rails},
          {"groups", std::move(groups)},
          {"groupPairs", std::move(pairs)},
          {"leavesPerGroup", c.leavesPerGroup},
          {"spinesPerGroup", c.spinesPerGroup},
          {"hostsPerLeaf", c.hostsPerLeaf},
          {"globalLinksPerSpine", c.globalLinksPerSpine},
          {"taper", c.taper},
          {"tapered", c.tapered},
          {"hosts", c.hosts},
          {"switches", c.switches},
          {"linksDown", c.linksDown},
          {"oddities", c.oddities}};
}

// ---------------------------------------------------------------- reading

PciDevice readPci(const json& j, const std::string& p) {
  PciDevice d;
  rd(j, "busId", &d.busId, p);
  rd(j, "vendor", &d.vendorId, p);
  rd(j, "device", &d.deviceId, p);
  rd(j, "class", &d.classId, p);
  rd(j, "linkGBps", &d.linkGBps, p);
  rd(j, "numa", &d.numa, p);
  rd(j, "package", &d.package, p);
  rd(j, "pciPath", &d.pciPath, p);
  return d;
}

std::vector<DevicePath> readPaths(const json& j, const char* key, const std::string& p) {
  std::vector<DevicePath> out;
  if (!j.contains(key)) return out;
  const json& arr = need(j, key, json::value_t::array, p);
  for (size_t i = 0; i < arr.size(); ++i) {
    std::string q = p + "/" + key + "/" + std::to_string(i);
    DevicePath d;
    rd(arr[i], "a", &d.a, q);
    rd(arr[i], "b", &d.b, q);
    rdEnum(arr[i], "class", &d.cls, q, parsePathClass, "LOC NVL NVB PIX PXB PHB SYS NET");
    rd(arr[i], "gbps", &d.gbps, q);
    rd(arr[i], "nvlinks", &d.nvlinks, q);
    out.push_back(d);
  }
  return out;
}

Host readHost(const json& j, const std::string& p) {
  if (!j.is_object()) throw SchemaError{p, "expected an object"};
  Host h;
  rd(j, "name", &h.name, p);
  rd(j, "packages", &h.packages, p);
  rd(j, "cores", &h.cores, p);
  rd(j, "pus", &h.pus, p);
  rd(j, "pciSwitches", &h.pciSwitches, p);
  rd(j, "nvswitches", &h.nvswitches, p);
  rd(j, "fabricNodes", &h.fabricNodes, p);
  if (j.contains("numa")) {
    const json& arr = need(j, "numa", json::value_t::array, p);
    for (size_t i = 0; i < arr.size(); ++i) {
      std::string q = p + "/numa/" + std::to_string(i);
      NumaNode n;
      rd(arr[i], "os", &n.osIndex, q);
      rd(arr[i], "package", &n.package, q);
      rd(arr[i], "memoryBytes", &n.memoryBytes, q);
      rd(arr[i], "cpus", &n.cpus, q);
      rd(arr[i], "cores", &n.cores, q);
      h.numa.push_back(n);
    }
  }
  if (j.contains("gpus")) {
    const json& arr = need(j, "gpus", json::value_t::array, p);
    for (size_t i = 0; i < arr.size(); ++i) {
      std::string q = p + "/gpus/" + std::to_string(i);
      Gpu g;
      rd(arr[i], "index", &g.index, q);
      rd(arr[i], "name", &g.name, q);
      rd(arr[i], "cudaDevice", &g.cudaDevice, q);
      if (arr[i].contains("pci")) g.pci = readPci(arr[i]["pci"], q + "/pci");
      h.gpus.push_back(g);
    }
  }
  if (j.contains("nics")) {
    const json& arr = need(j, "nics", json::value_t::array, p);
    for (size_t i = 0; i < arr.size(); ++i) {
      std::string q = p + "/nics/" + std::to_string(i);
      Nic n;
      rd(arr[i], "index", &n.index, q);
      rd(arr[i], "name", &n.name, q);
      rd(arr[i], "netdevs", &n.netdevs, q);
      n.nodeGuid = rdGuid(arr[i], "nodeGuid", q);
      rd(arr[i], "portGBps", &n.portGBps, q);
      rd(arr[i], "fabricNode", &n.fabricNode, q);
      rd(arr[i], "rail", &n.rail, q);
      if (arr[i].contains("pci")) n.pci = readPci(arr[i]["pci"], q + "/pci");
      h.nics.push_back(n);
    }
  }
  h.gpuNic = readPaths(j, "gpuNic", p);
  h.gpuGpu = readPaths(j, "gpuGpu", p);
  return h;
}

void readFabric(const json& j, Fabric* f) {
  const std::string p = "/fabric";
  rd(j, "source", &f->source, p);
  rd(j, "numSwitches", &f->numSwitches, p);
  const json& nodes = need(j, "nodes", json::value_t::array, p);
  f->nodes.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::string q = p + "/nodes/" + std::to_string(i);
    if (!nodes[i].is_object()) throw SchemaError{q, "expected an object"};
    FabricNode n;
    rdEnum(nodes[i], "kind", &n.kind, q, parseKind, "switch ca router");
    n.guid = rdGuid(nodes[i], "guid", q);
    rd(nodes[i], "desc", &n.desc, q);
    rd(nodes[i], "nports", &n.nports, q);
    rd(nodes[i], "lid", &n.lid, q);
    rdEnum(nodes[i], "role", &n.role, q, parseRole, "unknown host leaf spine core");
    rd(nodes[i], "level", &n.level, q);
    rd(nodes[i], "group", &n.group, q);
    rd(nodes[i], "rail", &n.rail, q);
    rd(nodes[i], "host", &n.host, q);
    f->nodes.push_back(std::move(n));
  }
  const json& links = need(j, "links", json::value_t::array, p);
  f->links.reserve(links.size());
  for (size_t i = 0; i < links.size(); ++i) {
    std::string q = p + "/links/" + std::to_string(i);
    if (!links[i].is_object()) throw SchemaError{q, "expected an object"};
    Link l;
    l.a = checkedInt<int>(need(links[i], "a", json::value_t::number_integer, q), q + "/a");
    l.b = checkedInt<int>(need(links[i], "b", json::value_t::number_integer, q), q + "/b");
    rd(links[i], "portA", &l.portA, q);
    rd(links[i], "portB", &l.portB, q);
    rd(links[i], "width", &l.width, q);
    rd(links[i], "speed", &l.speed, q);
    l.gbps = linkGBps(l.width, l.speed);
    rd(links[i], "gbps", &l.gbps, q);
    rd(links[i], "level", &l.level, q);
    rd(links[i], "global", &l.global, q);
    rd(links[i], "up", &l.up, q);
    f->links.push_back(std::move(l));
  }
}

void readClass(const json& j, Classification* c) {
  const std::string p = "/classification";
  rdEnum(j, "type", &c->type, p, parseFabricType, "none fat-tree dragonfly+ generic");
  rd(j, "levels", &c->levels, p);
  rd(j, "rails", &c->rails, p);
  if (j.contains("perLevel")) {
    const json& arr = need(j, "perLevel", json::value_t::array, p);
    for (size_t i = 0; i < arr.size(); ++i) {
      std::string q = p + "/perLevel/" + std::to_string(i);
      LevelInfo l;
      rd(arr[i], "level", &l.level, q);
      rd(arr[i], "switches", &l.switches, q);
      rd(arr[i], "downLinks", &l.downLinks, q);
      rd(arr[i], "upLinks", &l.upLinks, q);
      rd(arr[i], "downGBps", &l.downGBps, q);
      rd(arr[i], "upGBps", &l.upGBps, q);
      rd(arr[i], "oversubscription", &l.oversubscription, q);
      c->perLevel.push_back(l);
    }
  }
  if (j.contains("groups")) {
    const json& arr = need(j, "groups", json::value_t::array, p);
    for (size_t i = 0; i < arr.size(); ++i) {
      std::string q = p + "/groups/" + std::to_string(i);
      Group g;
      rd(arr[i], "leaves", &g.leaves, q);
      rd(arr[i], "spines", &g.spines, q);
      rd(arr[i], "hosts", &g.hosts, q);
      rd(arr[i], "globalLinks", &g.globalLinks, q);
      rd(arr[i], "globalGBps", &g.globalGBps, q);
      rd(arr[i], "hostGBps", &g.hostGBps, q);
      c->groups.push_back(std::move(g));
    }
  }
  if (j.contains("groupPairs")) {
    const json& arr = need(j, "groupPairs", json::value_t::array, p);
    for (size_t i = 0; i < arr.size(); ++i) {
      std::string q = p + "/groupPairs/" + std::to_string(i);
      GroupPair g;
      rd(arr[i], "a", &g.a, q);
      rd(arr[i], "b", &g.b, q);
      rd(arr[i], "links", &g.links, q);
      rd(arr[i], "gbps", &g.gbps, q);
      c->groupPairs.push_back(g);
    }
  }
  rd(j, "leavesPerGroup", &c->leavesPerGroup, p);
  rd(j, "spinesPerGroup", &c->spinesPerGroup, p);
  rd(j, "hostsPerLeaf", &c->hostsPerLeaf, p);
  rd(j, "globalLinksPerSpine", &c->globalLinksPerSpine, p);
  rd(j, "taper", &c->taper, p);
  rd(j, "tapered", &c->tapered, p);
  rd(j, "hosts", &c->hosts, p);
  rd(j, "switches", &c->switches, p);
  rd(j, "linksDown", &c->linksDown, p);
  rd(j, "oddities", &c->oddities, p);
}

// Line and column of a byte offset (1-based).
void lineCol(const std::string& text, size_t byte, int* line, int* col) {
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++*line;
      *col = 1;
    } else {
      ++*col;
    }
  }
}

}  // namespace

std::string toJson(const Topology& t, int indent) {
  json hosts = json::array();
  for (const Host& h : t.hosts) hosts.push_back(hostJson(h));
  json j = {{"loomTopology", kSchemaVersion},
            {"hosts", std::move(hosts)},
            {"fabric", fabricJson(t.fabric)},
            {"classification", classJson(t.cls)}};
  return j.dump(indent) + "\n";
}

Status fromJson(const std::string& text, Topology* out, const std::string& source) {
  Topology t;
  try {
    json j = json::parse(text);
    if (!j.is_object()) return invalidArgument(source, ": expected a JSON object at the top");
    int version = 0;
    rd(j, "loomTopology", &version, "");
    if (version != kSchemaVersion) {
      return invalidArgument(source, ": expected \"loomTopology\": ", kSchemaVersion,
                             " (schema version), got ", version);
    }
    if (j.contains("hosts")) {
      const json& hosts = need(j, "hosts", json::value_t::array, "");
      for (size_t i = 0; i < hosts.size(); ++i) {
        t.hosts.push_back(readHost(hosts[i], "/hosts/" + std::to_string(i)));
      }
    }
    if (j.contains("fabric")) readFabric(need(j, "fabric", json::value_t::object, ""), &t.fabric);
    if (j.contains("classification")) {
      readClass(need(j, "classification", json::value_t::object, ""), &t.cls);
    }
  } catch (const json::parse_error& e) {
    int line = 0, col = 0;
    lineCol(text, e.byte == 0 ? 0 : e.byte - 1, &line, &col);
    return invalidArgument(source, ":", line, ":", col, ": invalid JSON: ", e.what());
  } catch (const SchemaError& e) {
    return invalidArgument(source, ": at ", e.path.empty() ? "/" : e.path, ": ", e.what);
  } catch (const json::exception& e) {
    return invalidArgument(source, ": ", e.what());
  } catch (const std::exception& e) {
    return invalidArgument(source, ": ", e.what());
  }
  t.fabric.rebuildAdjacency();
  Status s = validate(t);
  if (!s.ok()) return invalidArgument(source, ": ", s.message());
  *out = std::move(t);
  return Status();
}

Status loadTopologyFile(const std::string& path, Topology* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return errnoStatus("cannot open topology file " + path, errno);
  std::stringstream ss;
  ss << in.rdbuf();
  return fromJson(ss.str(), out, path);
}

Status writeTopologyFile(const std::string& path, const Topology& t) {
  std::ofstream o(path, std::ios::binary | std::ios::trunc);
  if (!o) return errnoStatus("cannot write topology file " + path, errno);
  o << toJson(t);
  o.close();
  if (!o) return errnoStatus("error writing topology file " + path, errno);
  return Status();
}

}  // namespace loom::topo
