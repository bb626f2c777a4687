// libFuzzer target: hwloc XML through hwloc 2.x and loom's reading of it (NUMA, PCI tree, GPUs,
// NICs, NVLink matrix, path classes). Never crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "topo/node.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace loom::topo;
  std::string xml(reinterpret_cast<const char*>(data), size);
  Host h;
  (void)probeHostXmlBuffer(xml, "fuzz", &h);
  return 0;
}
