// Memory-bandwidth limits of this machine for the perf sizes, in one process on one core:
//   memcpy        dst = src (libc memcpy), bandwidth = size / time
//   reduce_plain  dst = a + b over float32 (a plain loop the compiler vectorises), size / time
//   reduce_loom   the same through loom's own CPU reduce kernel (kernels/reduce.h)
//   reduce_loom_ip  loom's kernel in place, dst = dst + b: what an in-place all-reduce's
//                   receive-and-reduce does (two operands, not three)
// A shared-memory all-reduce must at least read and write its buffer, so these bound what any
// library's bus bandwidth can reach on one core. Flags as the drivers: -b -e -f -i -n -w -J.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels/reduce.h"
#include "perf_args.h"

namespace {

using loom::perf::Options;

__attribute__((noinline)) void reducePlain(float* dst, const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = a[i] + b[i];
}

struct Bufs {
  char* a;
  char* b;
  char* dst;
};

// Seconds per call of fn(bytes), repeating until at least 20 ms or opts.iters calls have run.
template <typename Fn>
double timePerCall(const Options& opts, Fn fn) {
  for (int i = 0; i < opts.warmup; ++i) fn();
  int calls = 0;
  auto t0 = std::chrono::steady_clock::now();
  double elapsed = 0;
  do {
    fn();
    ++calls;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } while (calls < opts.iters || (elapsed < 0.02 && calls < 1000000));
  return elapsed / calls;
}

void emit(std::FILE* json, const char* backend, size_t bytes, double sec) {
  double gbs = bytes / sec / 1e9;
  std::printf("  %9.2f  %7.2f", sec * 1e6, gbs);
  if (json == nullptr) return;
  std::fprintf(
      json,
      "{\"coll\":\"all_reduce\",\"backend\":\"%s\",\"nranks\":1,\"launcher\":\"single\","
      "\"size\":%zu,\"count\":%zu,\"type\":\"float\",\"redop\":\"sum\",\"root\":-1,"
      "\"oop\":{\"time_us\":%.3f,\"algbw\":%.4f,\"busbw\":%.4f,\"wrong\":0},\"ip\":null}\n",
      backend, bytes, bytes / 4, sec * 1e6, gbs, gbs);
}

}  // namespace

int main(int argc, char** argv) {
  Options opts;
  opts.coll = "all_reduce";
  std::string error;
  if (!loom::perf::parseOptions(argc, argv, &opts, &error) || opts.showHelp) {
    if (!error.empty()) std::fprintf(stderr, "%s: %s\n", argv[0], error.c_str());
    std::fprintf(stderr,
                 "usage: %s [-b min] [-e max] [-f factor] [-n iters] [-w warmup] [-J file]\n",
                 argv[0]);
    return error.empty() ? 0 : 2;
  }
  std::FILE* json = opts.jsonFile.empty() ? nullptr : std::fopen(opts.jsonFile.c_str(), "a");
  if (!opts.jsonFile.empty() && json == nullptr) {
    std::perror(opts.jsonFile.c_str());
    return 2;
  }
  size_t most = opts.maxBytes < 64 ? 64 : opts.maxBytes;
  Bufs buf{static_cast<char*>(std::aligned_alloc(4096, (most + 4095) / 4096 * 4096)),
           static_cast<char*>(std::aligned_alloc(4096, (most + 4095) / 4096 * 4096)),
           static_cast<char*>(std::aligned_alloc(4096, (most + 4095) / 4096 * 4096))};
  std::memset(buf.a, 1, most);
  std::memset(buf.b, 2, most);
  std::memset(buf.dst, 0, most);
  std::printf("# membw_perf: one process, one core; loom reduce kernel ISA: %s\n",
              loom::kernels::isaName());
  std::printf("# %10s  %9s  %7s  %9s  %7s  %9s  %7s  %9s  %7s\n", "size", "memcpy", "", "reduce",
              "", "loom-red", "", "red-ip", "");
  std::printf("# %10s  %9s  %7s  %9s  %7s  %9s  %7s  %9s  %7s\n", "(B)", "(us)", "(GB/s)", "(us)",
              "(GB/s)", "(us)", "(GB/s)", "(us)", "(GB/s)");
  for (size_t bytes : loom::perf::sweepSizes(opts)) {
    size_t n = bytes / sizeof(float);
    if (n == 0) continue;
    std::printf("%12zu", bytes);
    emit(json, "memcpy", bytes, timePerCall(opts, [&] {
           std::memcpy(buf.dst, buf.a, bytes);
           asm volatile("" : : "r"(buf.dst) : "memory");
         }));
    auto* a = reinterpret_cast<float*>(buf.a);
    auto* b = reinterpret_cast<float*>(buf.b);
    auto* d = reinterpret_cast<float*>(buf.dst);
    emit(json, "reduce_plain", bytes, timePerCall(opts, [&] { reducePlain(d, a, b, n); }));
    emit(json, "reduce_loom", bytes, timePerCall(opts, [&] {
           loom::kernels::reduce(d, a, b, n, loom::DataType::kFloat32, loom::RedOp::kSum);
         }));
    emit(json, "reduce_loom_ip", bytes, timePerCall(opts, [&] {
           loom::kernels::reduce(d, d, b, n, loom::DataType::kFloat32, loom::RedOp::kSum);
         }));
    std::printf("\n");
    std::fflush(stdout);
  }
  if (json != nullptr) std::fclose(json);
  std::free(buf.a);
  std::free(buf.b);
  std::free(buf.dst);
  return 0;
}
