// loom-info: version, build features, the kernels' instruction set, the transport selection
// policy, and the parameter table.
//   loom-info            summary
//   loom-info --params   every LOOM_* parameter with default, current value and help
//   loom-info --params-md  the same as a markdown table (pasted into README.md)
#include <cstdio>
#include <cstring>
#include <string>

#include "algo/registry.h"
#include "core/params.h"
#include "kernels/reduce.h"
#include "loom/loom.h"
#include "transports/policy.h"

int main(int argc, char** argv) {
  bool params = false, md = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--params"))
      params = true;
    else if (!std::strcmp(argv[i], "--params-md"))
      params = md = true;
    else {
      std::fprintf(stderr, "usage: %s [--params | --params-md]\n", argv[0]);
      return 2;
    }
  }
  if (params) {
    if (md) std::printf("| variable | type | default | meaning |\n|---|---|---|---|\n");
    for (const auto& p : loom::params::all()) {
      if (md)
        std::printf("| `%s` | %s | `%s` | %s |\n", p.env, p.type, p.defaultValue.c_str(), p.help);
      else
        std::printf("%-24s %-7s default %-10s current %-10s %s\n", p.env, p.type,
                    p.defaultValue.c_str(), p.value.c_str(), p.help);
    }
    return 0;
  }
  int v = 0;
  loomGetVersion(&v);
  std::printf("loom %d.%d.%d\n", v / 10000, v / 100 % 100, v % 100);
  std::printf("reduce kernels: %s\n", loom::kernels::isaName());
  std::printf("algorithms:\n");
  for (const auto& a : loom::algo::registry())
    std::printf("  %-14s %s%s\n", loom::sched::collName(a.coll), a.name,
                a.host ? " (one-host communicators: the shm transport's direct primitive)" : "");
  std::printf("%s", loom::transport::policyText().c_str());
  return 0;
}
