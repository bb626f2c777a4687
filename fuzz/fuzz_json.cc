// libFuzzer target: Topology JSON. Properties: never crash; anything accepted round-trips exactly.
#include <cstddef>
#include <cstdint>
#include <string>

#include "topo/classify.h"
#include "topo/topology.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace loom::topo;
  std::string text(reinterpret_cast<const char*>(data), size);
  Topology t;
  if (!fromJson(text, &t, "fuzz").ok()) return 0;
  Topology u;
  if (!fromJson(toJson(t), &u, "again").ok() || !(u == t)) __builtin_trap();
  classify(&u);  // must cope with any valid graph
  (void)summary(u);
  return 0;
}
