#include "core/agree.h"

#include <cstdint>

namespace loom {

Status agreeOnOutcome(const std::function<Status(void*, size_t)>& allGather, int rank, int nranks,
                      const std::vector<PeerIdentity>& ids, const Status& local,
                      const std::string& what, const std::atomic<bool>* abortFlag) {
  struct Record {
    int32_t failed;
    int32_t code;
  };
  std::vector<Record> all(nranks);
  all[rank] = {local.ok() ? 0 : 1, static_cast<int32_t>(local.code())};
  Status g = allGather(all.data(), sizeof(Record));
  if (!local.ok()) return local;
  if (!g.ok()) return Status(g.code(), strCat(what, ": ", g.message()));
  for (int r = 0; r < nranks; ++r)
    if (all[r].failed)
      return remoteError(what, " failed on ",
                         r < static_cast<int>(ids.size()) ? ids[r].describe() : strCat("rank ", r),
                         "; see that rank's log");
  if (abortFlag != nullptr && abortFlag->load())
    return remoteError(what, " interrupted: communicator aborted");
  return Status();
}

}  // namespace loom
