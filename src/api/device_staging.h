// Collectives on GPU memory before loom has a device transport: device buffers are copied into
// page-locked host memory, the host schedule runs on the copies, and the results are copied back.
// Correct over every transport and for every collective; the price is a copy of each buffer in
// each direction over PCIe (docs/gpu.md). Device memory is recognised through the CUDA driver
// (core/cuda_driver.h), so this works in builds without the CUDA toolkit too.
#pragma once

#include <functional>
#include <vector>

#include "api/comm.h"

namespace loom::api {

// What a staged operation needs at run time (OpDesc::staging).
struct DeviceStaging {
  bool sendOnDevice = false, recvOnDevice = false;
  uint64_t sendBytes = 0, recvBytes = 0;  // the extents the call reads and writes
  bool recvHasGaps = false;               // the call writes only parts of recv (all-to-all-v)
  void* ctx = nullptr;                    // CUDA context owning the device memory
};

// After the argument checks: when sendbuff or recvbuff is device memory, sets o->staging.
void stageIfDevice(OpDesc* o, uint64_t sendBytes, uint64_t recvBytes);

bool anyStaged(const std::vector<OpDesc>& ops);

// Copies the staged ops' device buffers in, calls run() with host copies of the ops, and copies
// the results back when it succeeds.
Status runStaged(const std::vector<OpDesc>& ops,
                 const std::function<Status(const std::vector<OpDesc>&)>& run);

}  // namespace loom::api
