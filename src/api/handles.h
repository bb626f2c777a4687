// Handle memory that is never reused. loomComm_t and loomStream_t are pointers, and the registry
// of live objects tells a destroyed handle from a live one, but only as long as no new object is
// placed at the same address: with plain new/delete a communicator created after another was
// destroyed usually lands at the old address, and the stale handle is then accepted as the new
// communicator. Objects allocated here keep their address to themselves for the life of the
// process: destruction frees everything they own, and the few hundred bytes of the object itself
// are retired instead of returned to the allocator. So a stale handle is always kInvalidUsage.
#pragma once

#include <cstddef>

namespace loom::api {

void* allocateHandle(size_t bytes) noexcept;  // nullptr when out of memory
void retireHandle(void* p) noexcept;          // the address is never handed out again

}  // namespace loom::api
