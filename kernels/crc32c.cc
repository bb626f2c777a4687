#include "kernels/crc32c.h"

#include <cstring>

namespace loom::kernels {
namespace {

constexpr uint32_t kPoly = 0x82f63b78u;  // CRC32C, reflected

struct Table {
  uint32_t t[8][256];
  Table() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (kPoly & (0u - (c & 1)));
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
};

const Table& table() {
  static const Table t;
  return t;
}

using Fn = uint32_t (*)(uint32_t, const void*, size_t);

Fn choose() { return crc32cHardwareAvailable() ? crc32cHardware : crc32cPortable; }

Fn impl() {
  static const Fn f = choose();
  return f;
}

}  // namespace

// Slicing by 8: eight table lookups per 8 bytes.
uint32_t crc32cPortable(uint32_t crc, const void* data, size_t n) {
  const Table& tb = table();
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    w ^= c;
    c = tb.t[7][w & 0xff] ^ tb.t[6][(w >> 8) & 0xff] ^ tb.t[5][(w >> 16) & 0xff] ^
        tb.t[4][(w >> 24) & 0xff] ^ tb.t[3][(w >> 32) & 0xff] ^ tb.t[2][(w >> 40) & 0xff] ^
        tb.t[1][(w >> 48) & 0xff] ^ tb.t[0][w >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = (c >> 8) ^ tb.t[0][(c ^ *p++) & 0xff];
  return ~c;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
namespace {

// The crc32 instruction has a latency of three cycles and a throughput of one, so three
// independent streams over three blocks of kBlock bytes run about three times as fast as one; the
// three registers are then combined: raw(r, A B) = shiftBlock(raw(r, A)) ^ raw(0, B), where
// shiftBlock (appending kBlock zero bytes) is linear over GF(2), a 32 x 32 bit matrix.
constexpr size_t kBlock = 4096;

struct Shift {
  uint32_t col[32];  // shiftBlock of each single bit
  Shift() {
    const Table& tb = table();
    for (int j = 0; j < 32; ++j) {
      uint32_t c = 1u << j;
      for (size_t k = 0; k < kBlock; ++k) c = (c >> 8) ^ tb.t[0][c & 0xff];
      col[j] = c;
    }
  }
  uint32_t apply(uint32_t r) const {
    uint32_t out = 0;
    for (int j = 0; j < 32; ++j) out ^= col[j] & (0u - ((r >> j) & 1));
    return out;
  }
};

const Shift& shiftBlock() {
  static const Shift s;
  return s;
}

}  // namespace

__attribute__((target("sse4.2"))) uint32_t crc32cHardware(uint32_t crc, const void* data,
                                                          size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t c = ~crc;
  if (n >= 3 * kBlock) {
    const Shift& sh = shiftBlock();
    while (n >= 3 * kBlock) {
      uint64_t a = c, b = 0, d = 0;
      for (size_t i = 0; i < kBlock; i += 8) {
        uint64_t wa, wb, wd;
        std::memcpy(&wa, p + i, 8);
        std::memcpy(&wb, p + kBlock + i, 8);
        std::memcpy(&wd, p + 2 * kBlock + i, 8);
        a = __builtin_ia32_crc32di(a, wa);
        b = __builtin_ia32_crc32di(b, wb);
        d = __builtin_ia32_crc32di(d, wd);
      }
      c = sh.apply(sh.apply(static_cast<uint32_t>(a)) ^ static_cast<uint32_t>(b)) ^
          static_cast<uint32_t>(d);
      p += 3 * kBlock;
      n -= 3 * kBlock;
    }
  }
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    c = __builtin_ia32_crc32di(c, w);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n-- > 0) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return ~c32;
}
bool crc32cHardwareAvailable() { return __builtin_cpu_supports("sse4.2"); }
#else
uint32_t crc32cHardware(uint32_t crc, const void* data, size_t n) {
  return crc32cPortable(crc, data, n);
}
bool crc32cHardwareAvailable() { return false; }
#endif

uint32_t crc32c(uint32_t crc, const void* data, size_t n) { return impl()(crc, data, n); }

const char* crc32cImpl() { return impl() == crc32cHardware ? "sse4.2" : "portable"; }

}  // namespace loom::kernels
