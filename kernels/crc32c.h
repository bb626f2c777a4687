// CRC32C (Castagnoli), the checksum of LOOM_CHECKSUM=1 (docs/misuse.md). The SSE4.2 crc32
// instruction where the CPU has it (three interleaved streams over 4 KiB blocks, combined), a
// table-driven portable version (slicing by 8) otherwise; chosen once at run time. Both give the
// same value (tests/kernels/crc32c_test checks them against each other and against the standard
// check value of "123456789", 0xe3069283).
#pragma once

#include <cstddef>
#include <cstdint>

namespace loom::kernels {

// Extends `crc` (0 to start) over data[0, n). crc32c(crc32c(0, a), b) == crc32c(0, a ++ b).
uint32_t crc32c(uint32_t crc, const void* data, size_t n);
// The implementation crc32c() uses: "sse4.2" or "portable".
const char* crc32cImpl();
// Each implementation directly (tests).
uint32_t crc32cPortable(uint32_t crc, const void* data, size_t n);
uint32_t crc32cHardware(uint32_t crc, const void* data, size_t n);  // only where the CPU has it
bool crc32cHardwareAvailable();

}  // namespace loom::kernels
