// Monitor: what an operation reports after a failure, and the agreement on the failed set
// (heartbeat.h).
#include <chrono>

#include "core/heartbeat.h"

namespace loom::health {

namespace {
int64_t nowMs() { return net::nowNs() / 1000000; }
}  // namespace

std::string Monitor::namesLocked(const std::vector<int>& ranks) const {
  std::string out;
  for (int r : ranks) {
    if (!out.empty()) out += "; ";
    out += a_.ids[r].describe();
    if (!why_[r].empty()) out += ": " + why_[r];
  }
  return out;
}

std::vector<int> Monitor::failed() const {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<int> out;
  for (int q = 0; q < a_.nranks; ++q)
    if (failed_[q] || left_[q] || (q == a_.rank && excluded_)) out.push_back(q);
  return out;
}

Status Monitor::verdict() const {
  std::lock_guard<std::mutex> g(mu_);
  if (!revoked_) return Status();
  if (excluded_)
    return revokedError(a_.ids[a_.rank].describe(), " was declared failed by ", excludedBy_,
                        " (it missed heartbeats: was it stopped, hung or cut off?) and the "
                        "communicator was revoked; this rank is no longer part of it");
  std::vector<int> dead;
  for (int q = 0; q < a_.nranks; ++q)
    if (failed_[q]) dead.push_back(q);
  if (!dead.empty())
    return remoteError(namesLocked(dead),
                       "; the communicator is revoked on every rank (loomCommGetFailedRanks lists "
                       "the failed ranks, loomCommShrink continues without them)");
  return revokedError("communicator revoked: ", revokeWhy_);
}

Status Monitor::awaitVerdict(int64_t waitMs) {
  {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait_for(lk, std::chrono::milliseconds(std::max<int64_t>(0, waitMs)), [&] {
      if (revoked_) return true;
      for (uint8_t l : left_)
        if (l) return true;
      return false;
    });
  }
  return verdict();
}

Status Monitor::agree(int64_t timeoutMs, std::vector<int>* out) {
  const int64_t start = nowMs();
  {
    std::lock_guard<std::mutex> g(mu_);
    agreeing_ = true;
    fastUntilMs_ = start + 1000;
  }
  sendAll(0);
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    if (excluded_) {
      lk.unlock();
      return verdict();
    }
    std::vector<uint8_t> mine(a_.nranks, 0);
    for (int q = 0; q < a_.nranks; ++q) mine[q] = failed_[q] || left_[q];
    std::vector<int> missing;
    for (int q = 0; q < a_.nranks; ++q) {
      if (q == a_.rank || mine[q]) continue;
      if (!peerAgreeing_[q] || peerView_[q] != mine) missing.push_back(q);
    }
    const int64_t now = nowMs();
    fastUntilMs_ = std::max(fastUntilMs_, now + 200);
    if (missing.empty()) {
      out->clear();
      for (int q = 0; q < a_.nranks; ++q)
        if (mine[q]) out->push_back(q);
      // Keep answering fast for a while: the others may still need our last word.
      fastUntilMs_ = std::max(fastUntilMs_, now + 1000);
      return Status();
    }
    if (timeoutMs > 0 && now - start > timeoutMs) {
      std::string who;
      for (int q : missing) who += (who.empty() ? "" : ", ") + a_.ids[q].describe();
      return timeoutError("agreement on the failed ranks: no matching answer within ", timeoutMs,
                          " ms from ", who);
    }
    cv_.wait_for(lk, std::chrono::milliseconds(5));
  }
}

}  // namespace loom::health
