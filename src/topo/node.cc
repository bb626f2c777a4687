// hwloc 2.x -> Host. See node.h for the path-class rules.
#include "topo/node.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "core/log.h"
#include "core/params.h"

#ifdef LOOM_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace loom::topo {

#ifndef LOOM_HAVE_HWLOC

bool haveHwloc() { return false; }
Status probeHost(const std::string& xmlPath, Host* out) {
  return invalidUsage("node topology: loom was built without hwloc (libhwloc-dev)");
}
Status probeHostXmlBuffer(const std::string& xml, const std::string& source, Host* out) {
  return invalidUsage("node topology: loom was built without hwloc (libhwloc-dev)");
}

#else

bool haveHwloc() { return true; }

namespace {

struct HwlocTopo {
  hwloc_topology_t t = nullptr;
  ~HwlocTopo() {
    if (t) hwloc_topology_destroy(t);
  }
};

std::string busId(hwloc_obj_t o) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04x:%02x:%02x.%x", o->attr->pcidev.domain, o->attr->pcidev.bus,
                o->attr->pcidev.dev, o->attr->pcidev.func);
  return buf;
}

// Enum fields read as plain integers: hwloc keeps whatever number an XML file says, and loading
// an out-of-range value through the enum type is undefined behaviour.
template <typename E>
int rawEnum(const E& field) {
  static_assert(sizeof(E) == sizeof(int), "enum size");
  int v;
  std::memcpy(&v, &field, sizeof(v));
  return v;
}

// A PCI-to-PCI bridge (root port or switch port).
bool isPciBridge(hwloc_obj_t o) {
  return o->type == HWLOC_OBJ_BRIDGE &&
         rawEnum(o->attr->bridge.upstream_type) == HWLOC_OBJ_BRIDGE_PCI;
}
// A port of a PCIe switch: a PCI-to-PCI bridge below another one (root ports sit below a host
// bridge).
bool isPciSwitchPort(hwloc_obj_t o) {
  return isPciBridge(o) && o->parent && isPciBridge(o->parent);
}
bool isHostBridge(hwloc_obj_t o) {
  return o->type == HWLOC_OBJ_BRIDGE &&
         rawEnum(o->attr->bridge.upstream_type) == HWLOC_OBJ_BRIDGE_HOST;
}

int packageOf(hwloc_topology_t t, hwloc_obj_t cpuSide) {
  hwloc_obj_t p = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, cpuSide);
  if (p) return static_cast<int>(p->logical_index);
  if (cpuSide->type == HWLOC_OBJ_PACKAGE) return static_cast<int>(cpuSide->logical_index);
  return -1;
}

PciDevice pciOf(hwloc_topology_t t, hwloc_obj_t o) {
  PciDevice d;
  d.busId = busId(o);
  d.vendorId = o->attr->pcidev.vendor_id;
  d.deviceId = o->attr->pcidev.device_id;
  d.classId = o->attr->pcidev.class_id;
  d.linkGBps = o->attr->pcidev.linkspeed;
  hwloc_obj_t cpu = hwloc_get_non_io_ancestor_obj(t, o);
  if (cpu) {
    d.package = packageOf(t, cpu);
    hwloc_location loc;
    loc.type = HWLOC_LOCATION_TYPE_OBJECT;
    loc.location.object = cpu;
    unsigned nr = 1;
    hwloc_obj_t numa = nullptr;
    if (hwloc_get_local_numanode_objs(t, &loc, &nr, &numa, 0) == 0 && nr >= 1 && numa) {
      d.numa = static_cast<int>(numa->os_index);
    }
  }
  std::vector<std::string> path;
  for (hwloc_obj_t p = o->parent; p && p->type == HWLOC_OBJ_BRIDGE; p = p->parent) {
    if (isHostBridge(p)) {
      char buf[40];
      std::snprintf(buf, sizeof(buf), "hostbridge:%04x:%02x", p->attr->bridge.downstream.pci.domain,
                    p->attr->bridge.downstream.pci.secondary_bus);
      path.push_back(buf);
    } else {
      path.push_back(busId(p));
    }
  }
  d.pciPath.assign(path.rbegin(), path.rend());
  return d;
}

uint64_t parseGuid(const char* s) {
  uint64_t v = 0;
  for (; s && *s; ++s) {
    char c = *s;
    if (c >= '0' && c <= '9')
      v = v * 16 + (c - '0');
    else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
      v = v * 16 + ((c | 0x20) - 'a' + 10);
  }
  return v;
}

// hwloc_get_common_ancestor_obj() compares depths, which are negative pseudo-depths for I/O
// objects, and can walk past the root on them (found by fuzzing): walk parent chains instead.
hwloc_obj_t commonAncestor(hwloc_obj_t a, hwloc_obj_t b) {
  std::vector<hwloc_obj_t> chain;
  for (hwloc_obj_t p = a; p; p = p->parent) chain.push_back(p);
  for (hwloc_obj_t q = b; q; q = q->parent) {
    if (std::find(chain.begin(), chain.end(), q) != chain.end()) return q;
  }
  return nullptr;
}

// PCIe path class of two I/O objects.
PathClass pciClass(hwloc_topology_t t, hwloc_obj_t a, hwloc_obj_t b, int pkgA, int pkgB) {
  hwloc_obj_t ca = commonAncestor(a, b);
  if (ca && isPciBridge(ca)) {
    auto hops = [&](hwloc_obj_t o) {
      int n = 0;
      for (hwloc_obj_t p = o->parent; p && p != ca; p = p->parent) n += isPciSwitchPort(p) ? 1 : 0;
      return n;
    };
    return std::max(hops(a), hops(b)) <= 1 ? PathClass::kPix : PathClass::kPxb;
  }
  if (ca && (isHostBridge(ca) || ca->type == HWLOC_OBJ_PCI_DEVICE)) return PathClass::kPhb;
  return (pkgA >= 0 && pkgA == pkgB) ? PathClass::kPhb : PathClass::kSys;
}

double pcieGBps(const PciDevice& a, const PciDevice& b, PathClass c) {
  double la = a.linkGBps > 0 ? a.linkGBps : kDefaultPcieGBps;
  double lb = b.linkGBps > 0 ? b.linkGBps : kDefaultPcieGBps;
  double bw = std::min(la, lb);
  return c == PathClass::kSys ? std::min(bw, kSmpGBps) : bw;
}

void readCpus(hwloc_topology_t t, Host* h) {
  h->packages = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
  h->cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
  h->pus = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
  int nn = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < nn; ++i) {
    hwloc_obj_t o = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, i);
    NumaNode n;
    n.osIndex = static_cast<int>(o->os_index);
    n.package = o->parent ? packageOf(t, o->parent) : -1;
    n.memoryBytes = static_cast<int64_t>(o->attr->numanode.local_memory);
    n.cores = hwloc_get_nbobjs_inside_cpuset_by_type(t, o->cpuset, HWLOC_OBJ_CORE);
    unsigned id;
    hwloc_bitmap_foreach_begin(id, o->cpuset) { n.cpus.push_back(static_cast<int>(id)); }
    hwloc_bitmap_foreach_end();
    h->numa.push_back(std::move(n));
  }
}

struct Devices {
  std::vector<hwloc_obj_t> gpus, nics;
};

void readPci(hwloc_topology_t t, Host* h, Devices* dev) {
  for (hwloc_obj_t o = hwloc_get_next_bridge(t, nullptr); o; o = hwloc_get_next_bridge(t, o)) {
    h->pciSwitches += isPciSwitchPort(o) ? 1 : 0;
  }
  for (hwloc_obj_t o = hwloc_get_next_pcidev(t, nullptr); o; o = hwloc_get_next_pcidev(t, o)) {
    const unsigned cls = o->attr->pcidev.class_id, vendor = o->attr->pcidev.vendor_id;
    const bool nvswitch = (o->subtype && std::string(o->subtype) == "NVSwitch") ||
                          (vendor == 0x10de && cls == 0x0680);
    if (nvswitch) {
      ++h->nvswitches;
    } else if (cls == 0x0302 || (cls == 0x0300 && (vendor == 0x10de || vendor == 0x1002))) {
      Gpu g;
      g.index = static_cast<int>(h->gpus.size());
      g.pci = pciOf(t, o);
      const char* model = hwloc_obj_get_info_by_name(o, "PCIDevice");
      g.name = model ? model : "gpu";
      h->gpus.push_back(g);
      dev->gpus.push_back(o);
    } else if (cls == 0x0207 || cls == 0x0200) {
      Nic n;
      n.index = static_cast<int>(h->nics.size());
      n.pci = pciOf(t, o);
      for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling) {
        if (c->type != HWLOC_OBJ_OS_DEVICE) continue;
        if (rawEnum(c->attr->osdev.type) == HWLOC_OBJ_OSDEV_OPENFABRICS) {
          n.name = c->name;
          n.nodeGuid = parseGuid(hwloc_obj_get_info_by_name(c, "NodeGUID"));
        } else if (rawEnum(c->attr->osdev.type) == HWLOC_OBJ_OSDEV_NETWORK) {
          n.netdevs.push_back(c->name);
        }
      }
      if (n.name.empty()) n.name = n.netdevs.empty() ? n.pci.busId : n.netdevs.front();
      h->nics.push_back(n);
      dev->nics.push_back(o);
    }
  }
}

// NVLinkBandwidth matrix: per GPU, direct GPU links and summed NVSwitch bandwidth (MB/s).
struct NvLinks {
  std::map<std::pair<int, int>, double> direct;  // (gpu, gpu) -> MB/s
  std::vector<double> toSwitch;                  // per gpu, MB/s
  std::vector<int> switchLinks;                  // per gpu, NVSwitch entries
};

NvLinks readNvLinks(hwloc_topology_t t, const Devices& dev) {
  NvLinks nv;
  nv.toSwitch.assign(dev.gpus.size(), 0);
  nv.switchLinks.assign(dev.gpus.size(), 0);
  unsigned nr = 1;
  hwloc_distances_s* d = nullptr;
  if (hwloc_distances_get_by_name(t, "NVLinkBandwidth", &nr, &d, 0) != 0 || nr < 1) return nv;
  auto gpuOf = [&](hwloc_obj_t o) -> int {
    if (o && o->type == HWLOC_OBJ_OS_DEVICE) o = o->parent;
    auto it = std::find(dev.gpus.begin(), dev.gpus.end(), o);
    return it == dev.gpus.end() ? -1 : static_cast<int>(it - dev.gpus.begin());
  };
  auto isSwitch = [](hwloc_obj_t o) {
    return o && o->subtype && std::string(o->subtype) == "NVSwitch";
  };
  const unsigned n = d->nbobjs;
  for (unsigned i = 0; i < n; ++i) {
    int gi = gpuOf(d->objs[i]);
    if (gi < 0) continue;
    for (unsigned j = 0; j < n; ++j) {
      double v = static_cast<double>(d->values[i * n + j]);
      if (i == j || v <= 0) continue;
      int gj = gpuOf(d->objs[j]);
      if (gj >= 0) {
        nv.direct[{gi, gj}] = v;
      } else if (isSwitch(d->objs[j])) {
        nv.toSwitch[gi] += v;
        ++nv.switchLinks[gi];
      }
    }
  }
  hwloc_distances_release(t, d);
  return nv;
}

void computePaths(hwloc_topology_t t, const Devices& dev, Host* h) {
  NvLinks nv = readNvLinks(t, dev);
  const int ng = static_cast<int>(h->gpus.size());
  for (int a = 0; a < ng; ++a) {
    for (int b = a + 1; b < ng; ++b) {
      DevicePath p;
      p.a = a;
      p.b = b;
      auto it = nv.direct.find({a, b});
      if (it != nv.direct.end()) {
        p.cls = PathClass::kNvl;
        p.gbps = it->second / 1000.0;
        p.nvlinks = 1;
      } else if (nv.toSwitch[a] > 0 && nv.toSwitch[b] > 0) {
        p.cls = PathClass::kNvb;
        p.gbps = std::min(nv.toSwitch[a], nv.toSwitch[b]) / 1000.0;
        p.nvlinks = std::min(nv.switchLinks[a], nv.switchLinks[b]);
      } else {
        p.cls =
            pciClass(t, dev.gpus[a], dev.gpus[b], h->gpus[a].pci.package, h->gpus[b].pci.package);
        p.gbps = pcieGBps(h->gpus[a].pci, h->gpus[b].pci, p.cls);
      }
      h->gpuGpu.push_back(p);
    }
    for (int k = 0; k < static_cast<int>(h->nics.size()); ++k) {
      DevicePath p;
      p.a = a;
      p.b = k;
      p.cls = pciClass(t, dev.gpus[a], dev.nics[k], h->gpus[a].pci.package, h->nics[k].pci.package);
      p.gbps = pcieGBps(h->gpus[a].pci, h->nics[k].pci, p.cls);
      h->gpuNic.push_back(p);
    }
  }
}

}  // namespace

namespace {
const char* const kXmlExpected =
    ": hwloc cannot read this XML: expected an hwloc 2.x topology XML (<topology "
    "version=\"2.0\">, e.g. from lstopo --of xml)";

Status readHost(HwlocTopo& ht, const std::string& what, Host* out) {
  if (hwloc_topology_load(ht.t) != 0) {
    return invalidArgument(what, ": hwloc_topology_load failed (malformed or not hwloc 2.x XML?)");
  }
  Host h;
  const char* hn = hwloc_obj_get_info_by_name(hwloc_get_root_obj(ht.t), "HostName");
  if (hn) {
    h.name = hn;
  } else {
    char buf[256] = {0};
    gethostname(buf, sizeof(buf) - 1);
    h.name = buf;
  }
  readCpus(ht.t, &h);
  Devices dev;
  readPci(ht.t, &h, &dev);
  computePaths(ht.t, dev, &h);
  LOOM_INFO(TOPO, "hwloc ", what, ": ", h.numa.size(), " NUMA, ", h.cores, " cores, ",
            h.gpus.size(), " GPUs, ", h.nics.size(), " NICs");
  *out = std::move(h);
  return Status();
}

Status initTopo(HwlocTopo* ht) {
  if (hwloc_topology_init(&ht->t) != 0) return systemError("hwloc_topology_init failed");
  hwloc_topology_set_io_types_filter(ht->t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  return Status();
}
}  // namespace

Status probeHost(const std::string& xmlPathArg, Host* out) {
  std::string xml = xmlPathArg.empty() ? params::hwlocXml() : xmlPathArg;
  if (!xml.empty()) {
    std::ifstream in(xml, std::ios::binary);
    if (!in) return errnoStatus("cannot read hwloc XML " + xml, errno);
    std::stringstream ss;
    ss << in.rdbuf();
    return probeHostXmlBuffer(ss.str(), xml, out);
  }
  HwlocTopo ht;
  LOOM_CHECK(initTopo(&ht));
  LOOM_CHECK(readHost(ht, "this machine", out));
  matchCudaDevices(out);
  return Status();
}

Status probeHostXmlBuffer(const std::string& xml, const std::string& source, Host* out) {
  if (xml.empty()) return invalidArgument(source, ": empty file", kXmlExpected);
  LOOM_CHECK(hwlocXmlPreflight(xml, source));
  HwlocTopo ht;
  LOOM_CHECK(initTopo(&ht));
  if (hwloc_topology_set_xmlbuffer(ht.t, xml.data(), static_cast<int>(xml.size())) != 0) {
    return invalidArgument(source, kXmlExpected);
  }
  return readHost(ht, source, out);
}

#endif  // LOOM_HAVE_HWLOC

}  // namespace loom::topo
