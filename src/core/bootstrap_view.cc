// Derived bootstraps (bootstrap.h deriveBootstrap): a subset of a parent's ranks, renumbered in
// order, over the parent's connections. A shrunk communicator is built on one, so it needs neither
// the rendezvous root nor new identities.
#include <algorithm>

#include "core/bootstrap.h"

namespace loom::bootstrap {
namespace {

class BootstrapView final : public Bootstrap {
 public:
  BootstrapView(std::shared_ptr<Bootstrap> parent, std::vector<int> members, int32_t tag,
                const std::atomic<bool>* abort)
      : parent_(std::move(parent)), members_(std::move(members)), tag_(tag), abort_(abort) {
    const std::vector<PeerIdentity>& all = parent_->peers();
    for (size_t i = 0; i < members_.size(); ++i) {
      PeerIdentity id = all[members_[i]];
      id.rank = static_cast<int>(i);
      if (members_[i] == parent_->rank()) rank_ = static_cast<int>(i);
      peers_.push_back(id);
    }
    assignHostIndices(&peers_);
  }

  int rank() const override { return rank_; }
  int nranks() const override { return static_cast<int>(members_.size()); }
  const std::vector<PeerIdentity>& peers() const override { return peers_; }
  Status allGather(void* data, size_t bytesPerRank) override {
    return parent_->allGatherSub(members_, tag_, data, bytesPerRank, abort_.load());
  }
  Status barrier() override {
    std::vector<uint8_t> dummy(members_.size(), 0);
    return allGather(dummy.data(), 1);
  }
  Status send(int, int, const void*, size_t) override {
    return invalidUsage("point-to-point messages are not offered on a derived bootstrap");
  }
  Status recv(int, int, void*, size_t) override {
    return invalidUsage("point-to-point messages are not offered on a derived bootstrap");
  }
  Status allGatherSub(const std::vector<int>& ranks, int32_t tag, void* data, size_t bytesPerRank,
                      const std::atomic<bool>* abort) override {
    std::vector<int> mapped;
    for (int r : ranks) {
      if (r < 0 || r >= nranks())
        return invalidArgument("bootstrap allGatherSub: rank ", r, " outside [0, ", nranks(), ")");
      mapped.push_back(members_[r]);
    }
    return parent_->allGatherSub(mapped, tag, data, bytesPerRank, abort);
  }
  void setAbortFlag(const std::atomic<bool>* abort) override { abort_ = abort; }

 private:
  std::shared_ptr<Bootstrap> parent_;
  std::vector<int> members_;  // parent rank numbers
  int32_t tag_;
  std::atomic<const std::atomic<bool>*> abort_;
  int rank_ = -1;
  std::vector<PeerIdentity> peers_;
};

}  // namespace

Status deriveBootstrap(std::shared_ptr<Bootstrap> parent, const std::vector<int>& members,
                       uint64_t salt, const std::atomic<bool>* abort,
                       std::shared_ptr<Bootstrap>* out) {
  if (!parent) return invalidArgument("deriveBootstrap: parent is NULL");
  bool mine = false;
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i] < 0 || members[i] >= parent->nranks() || (i > 0 && members[i] <= members[i - 1]))
      return invalidArgument("deriveBootstrap: members must ascend within [0, ", parent->nranks(),
                             ")");
    mine = mine || members[i] == parent->rank();
  }
  if (!mine) return invalidArgument("deriveBootstrap: rank ", parent->rank(), " is not a member");
  // Tags below -1 (allGather's own), spread by the salt and the member list.
  uint64_t h = salt * 0x9e3779b97f4a7c15ull;
  for (int m : members) h = (h ^ static_cast<uint64_t>(m)) * 0x100000001b3ull;
  const int32_t tag = -2 - static_cast<int32_t>(h % 0x3fffffff);
  *out = std::make_shared<BootstrapView>(std::move(parent), members, tag, abort);
  return Status();
}

}  // namespace loom::bootstrap
