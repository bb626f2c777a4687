// One round of a collective setup step (creating and mapping shared segments, say): every rank
// contributes whether its own part failed, so all ranks take the same path afterwards and a rank
// whose peer failed reports that peer instead of waiting for it until a timeout.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "core/identity.h"
#include "core/status.h"

namespace loom {

// Gathers every rank's outcome of `what` (e.g. "shm setup (map peer segments)") through allGather.
// Returns `local` if it failed, else the allGather's own error, else the first remote failure
// (naming that rank), else an error if abortFlag is set, else OK.
// `ids` may be shorter than nranks (a bad argument that is itself being agreed on).
Status agreeOnOutcome(const std::function<Status(void*, size_t)>& allGather, int rank, int nranks,
                      const std::vector<PeerIdentity>& ids, const Status& local,
                      const std::string& what, const std::atomic<bool>* abortFlag = nullptr);

}  // namespace loom
