// Single-core throughput of the CPU reduce kernels against memcpy of the same size.
//
//   build/perf/bench_reduce [--benchmark_filter=float32] [google-benchmark flags]
//
// reduce/<dtype>/<isa>/<bytes> runs reduceInto(dst, src, n, dtype, sum), as the shm transport
// does when it reduces from the shared buffer into the user's buffer: two streams read, one
// written. memcpy/<bytes> copies <bytes>: one read, one write.
// bytes_per_second (shown as "B/s") counts the user buffer's bytes once; the "mem_GBps" counter
// counts every byte that crosses the memory interface (3x for reduce, 2x for memcpy).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/datatype.h"
#include "kernels/dispatch.h"
#include "kernels/reduce.h"

namespace loom::kernels {
namespace {

constexpr int64_t kMinBytes = 4 << 10;
constexpr int64_t kMaxBytes = 64 << 20;

// 4 KiB-aligned and touched, so page faults are not timed. Filled with 0x3c00 halves: 1.0 in
// float16, about 0.0078 in float32 and bfloat16; repeated sums grow but never reach subnormals
// (which could slow the arithmetic) and, in float16/bf16, stop growing long before Inf.
struct Buffer {
  explicit Buffer(size_t bytes) : storage(bytes / 8 + 512) {
    auto addr = reinterpret_cast<uintptr_t>(storage.data());
    data = reinterpret_cast<uint8_t*>((addr + 4095) & ~uintptr_t{4095});
    for (size_t i = 0; i < bytes; i += 2) {
      uint16_t v = 0x3c00;
      std::memcpy(data + i, &v, 2);
    }
  }
  std::vector<uint64_t> storage;
  uint8_t* data;
};

void setCounters(benchmark::State& state, int64_t bytes, int streams) {
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["mem_GBps"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * static_cast<double>(bytes) * streams / 1e9,
      benchmark::Counter::kIsRate);
}

void benchReduce(benchmark::State& state, DataType dt, Isa isa) {
  if (setIsaForTesting(isa) != isa) {
    state.SkipWithError("ISA not supported by this CPU");
    return;
  }
  const int64_t bytes = state.range(0);
  const size_t n = static_cast<size_t>(bytes) / dtypeSize(dt);
  Buffer dst(bytes), src(bytes);
  for (auto _ : state) {
    reduceInto(dst.data, src.data, n, dt, RedOp::kSum);
    benchmark::DoNotOptimize(dst.data);
    benchmark::ClobberMemory();
  }
  setCounters(state, bytes, 3);
}

void benchMemcpy(benchmark::State& state) {
  const int64_t bytes = state.range(0);
  Buffer dst(bytes), src(bytes);
  for (auto _ : state) {
    std::memcpy(dst.data, src.data, static_cast<size_t>(bytes));
    benchmark::DoNotOptimize(dst.data);
    benchmark::ClobberMemory();
  }
  setCounters(state, bytes, 2);
}

void registerAll() {
  benchmark::RegisterBenchmark("memcpy", benchMemcpy)
      ->RangeMultiplier(4)
      ->Range(kMinBytes, kMaxBytes);
  for (DataType dt :
       {DataType::kFloat32, DataType::kBfloat16, DataType::kFloat16, DataType::kInt32}) {
    for (Isa isa : {Isa::kAvx512, Isa::kAvx2, Isa::kScalar}) {
      if (static_cast<int>(isa) > static_cast<int>(cpuIsa())) continue;
      std::string name = std::string("reduce_sum/") + dtypeName(dt) + "/" + isaName(isa);
      benchmark::RegisterBenchmark(name.c_str(), benchReduce, dt, isa)
          ->RangeMultiplier(4)
          ->Range(kMinBytes, kMaxBytes);
    }
  }
}

}  // namespace
}  // namespace loom::kernels

int main(int argc, char** argv) {
  loom::kernels::registerAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
