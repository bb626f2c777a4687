// Why single copy loses on this VM: per-CPU-second bandwidth (CLOCK_THREAD_CPUTIME_ID) of the
// copies each shm path makes, 128 MiB moved in the pieces the transport uses.
//   memcpy DRAM->DRAM       plain memcpy of the whole buffer
//   memcpy DRAM->ring       256 KiB slices into a 4 MiB ring (the copy path's sender)
//   memcpy ring->DRAM       256 KiB slices out of the ring (the copy path's receiver)
//   nt ring->DRAM           the same with AVX-512 non-temporal stores (not used by loom today)
//   pvm DRAM->DRAM          process_vm_readv in 1 MiB pieces (single copy, plain receive)
//   pvm DRAM->block         process_vm_readv in 128 KiB pieces into one block (reducing receive)
//   pvm hot 128 KiB         process_vm_readv of a cached 128 KiB buffer: fixed cost per 4 KiB page
// Build and run: g++ -O2 -mavx512f -o /tmp/pvm_cost pvm_cost.cc && /tmp/pvm_cost
#include <immintrin.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>

static double cpu() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static void pvm(void* dst, const void* src, size_t n) {
  iovec l{dst, n}, r{const_cast<void*>(src), n};
  if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != static_cast<ssize_t>(n)) std::abort();
}
static void ntcopy(char* d, const char* s, size_t n) {
  for (size_t i = 0; i < n; i += 64)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d + i), _mm512_loadu_si512(s + i));
  _mm_sfence();
}
int main() {
  const size_t N = 128 << 20, ring = 4 << 20, sl = 256 << 10, blk = 128 << 10;
  char* a = static_cast<char*>(aligned_alloc(64, N));
  char* b = static_cast<char*>(aligned_alloc(64, N));
  char* r = static_cast<char*>(aligned_alloc(64, ring));
  memset(a, 1, N), memset(b, 2, N), memset(r, 3, ring);
  auto run = [&](const char* name, size_t bytes, const std::function<void()>& f) {
    double best = 0;
    for (int rep = 0; rep < 5; ++rep) {
      double t0 = cpu();
      f();
      double gbs = bytes / (cpu() - t0) / 1e9;
      if (gbs > best) best = gbs;
    }
    std::printf("%-22s %6.2f GB/s per CPU second (best of 5)\n", name, best);
  };
  run("memcpy DRAM->DRAM", N, [&] { memcpy(b, a, N); });
  run("memcpy DRAM->ring", N, [&] {
    for (size_t o = 0; o < N; o += sl) memcpy(r + o % ring, a + o, sl);
  });
  run("memcpy ring->DRAM", N, [&] {
    for (size_t o = 0; o < N; o += sl) memcpy(b + o, r + o % ring, sl);
  });
  run("nt ring->DRAM", N, [&] {
    for (size_t o = 0; o < N; o += sl) ntcopy(b + o, r + o % ring, sl);
  });
  run("pvm DRAM->DRAM", N, [&] {
    for (size_t o = 0; o < N; o += 1 << 20) pvm(b + o, a + o, 1 << 20);
  });
  run("pvm DRAM->block", N, [&] {
    for (size_t o = 0; o < N; o += blk) pvm(r, a + o, blk);
  });
  run("pvm hot 128 KiB", blk * 4096, [&] {
    for (int i = 0; i < 4096; ++i) pvm(r, r + blk, blk);
  });
  run("memcpy hot 128 KiB", blk * 4096, [&] {
    for (int i = 0; i < 4096; ++i) {
      memcpy(r, r + blk, blk);
      asm volatile("" ::: "memory");
    }
  });
}
