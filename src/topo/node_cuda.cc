// Matches the GPUs found by hwloc to CUDA device indices by PCI bus id. The CUDA driver library
// is opened at run time (dlopen of libcuda.so.1), so loom needs no CUDA toolkit to build and
// machines without a driver simply keep cudaDevice = -1. CUDA_VISIBLE_DEVICES is honoured
// because the driver only enumerates visible devices.
#include <dlfcn.h>

#include <cstdio>

#include "core/log.h"
#include "topo/node.h"

namespace loom::topo {

namespace {
using CuInit = int (*)(unsigned);
using CuDeviceGetCount = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetPciBusId = int (*)(char*, int, int);

// "0000:3B:00.0" or "00000000:3b:00.0" -> comparable tuple; false when malformed.
bool parseBusId(const std::string& s, unsigned v[4]) {
  return std::sscanf(s.c_str(), "%x:%x:%x.%x", &v[0], &v[1], &v[2], &v[3]) == 4;
}
}  // namespace

bool busIdsEqual(const std::string& a, const std::string& b) {
  unsigned x[4], y[4];
  if (!parseBusId(a, x) || !parseBusId(b, y)) return false;
  return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3];
}

int matchCudaDevices(Host* h) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return 0;
  auto init = reinterpret_cast<CuInit>(dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<CuDeviceGetCount>(dlsym(lib, "cuDeviceGetCount"));
  auto get = reinterpret_cast<CuDeviceGet>(dlsym(lib, "cuDeviceGet"));
  auto busId = reinterpret_cast<CuDeviceGetPciBusId>(dlsym(lib, "cuDeviceGetPCIBusId"));
  int n = 0, matched = 0;
  if (init && count && get && busId && init(0) == 0 && count(&n) == 0) {
    for (int i = 0; i < n; ++i) {
      int dev = 0;
      char buf[64] = {0};
      if (get(&dev, i) != 0 || busId(buf, sizeof(buf), dev) != 0) continue;
      for (Gpu& g : h->gpus) {
        if (busIdsEqual(g.pci.busId, buf)) {
          g.cudaDevice = i;
          ++matched;
        }
      }
    }
    LOOM_INFO(TOPO, "CUDA: ", n, " devices, ", matched, " matched to hwloc GPUs by PCI bus id");
  }
  dlclose(lib);
  return matched;
}

}  // namespace loom::topo
