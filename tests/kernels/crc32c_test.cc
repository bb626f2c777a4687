// CRC32C (LOOM_CHECKSUM): the standard check value, the hardware and portable versions agree on
// every length and alignment, and a checksum extends over pieces as over the whole.
#include "kernels/crc32c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace loom::kernels {
namespace {

TEST(Crc32c, StandardCheckValue) {
  const char* s = "123456789";
  EXPECT_EQ(crc32c(0, s, 9), 0xe3069283u);
  EXPECT_EQ(crc32cPortable(0, s, 9), 0xe3069283u);
  if (crc32cHardwareAvailable()) {
    EXPECT_EQ(crc32cHardware(0, s, 9), 0xe3069283u);
  }
  EXPECT_EQ(crc32c(0, s, 0), 0u);
}

TEST(Crc32c, HardwareAndPortableAgreeAndPiecesCompose) {
  std::mt19937 rng(7);
  std::vector<uint8_t> buf(70000);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  for (size_t off : {0, 1, 3, 7}) {
    for (size_t n : {0, 1, 7, 8, 9, 63, 64, 65, 4096, 65536}) {
      const uint32_t want = crc32cPortable(0, buf.data() + off, n);
      if (crc32cHardwareAvailable()) {
        EXPECT_EQ(crc32cHardware(0, buf.data() + off, n), want) << off << " " << n;
      }
      const size_t cut = n / 3;
      EXPECT_EQ(crc32c(crc32c(0, buf.data() + off, cut), buf.data() + off + cut, n - cut), want);
    }
  }
  // One flipped bit changes it.
  const uint32_t before = crc32c(0, buf.data(), 4096);
  buf[100] ^= 1;
  EXPECT_NE(crc32c(0, buf.data(), 4096), before);
  EXPECT_STRNE(crc32cImpl(), "");
}

}  // namespace
}  // namespace loom::kernels
