// What differs between torch 1.13 (built and tested here) and 2.x: since 2.0 a ProcessGroup only
// routes to one c10d::Backend per device type, and a plugin's creator returns a Backend. The class
// is the same otherwise (same operation signatures, Work, options). torch/version.h is missing from
// Debian's 1.13 headers, so its absence means 1.x.
#pragma once

#if __has_include(<torch/version.h>)
#include <torch/version.h>
#endif

#if defined(TORCH_VERSION_MAJOR) && TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#define LOOM_TORCH_2 1
namespace loom::torch_backend {
using TorchBase = c10d::Backend;  // torch 2.x: the per-device backend under a ProcessGroup
}
#else
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#define LOOM_TORCH_2 0
namespace loom::torch_backend {
using TorchBase = c10d::ProcessGroup;  // torch 1.13: the process group itself
}
#endif
