// Bootstrap: ranks rendezvous over TCP using the unique id, exchange identities and addresses, and
// then offer small out-of-band collectives (allGather, barrier) and point-to-point messages that
// transports use to connect. Every connection presents the job key from the unique id; one that
// does not is refused and logged.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/identity.h"
#include "core/status.h"

namespace loom::bootstrap {

constexpr size_t kUniqueIdBytes = 128;  // == LOOM_UNIQUE_ID_BYTES

// Creates a unique id: picks the interface (LOOM_SOCKET_IFNAME), starts the root rendezvous service
// in a background thread of this process listening on it, and writes address + random job key
// into `id` (kUniqueIdBytes). The root service serves one communicator and exits when done.
Status makeUniqueId(char* id);

// Hex text form of an id, and back (errors name the malformed input).
std::string idToString(const char* id);
Status idFromString(const std::string& text, char* id);

// Job key inside an id, as hex (used to derive per-communicator names, e.g. shm segments).
std::string idTag(const char* id);

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  // Collective: every rank of the job calls it with the same id. Fails with kTimeout naming the
  // ranks that never arrived, or kRemoteError, within timeoutMs; returns promptly after *abort.
  static Status create(const char* id, int rank, int nranks, int64_t timeoutMs,
                       const std::atomic<bool>* abort, std::unique_ptr<Bootstrap>* out);

  virtual int rank() const = 0;
  virtual int nranks() const = 0;
  // Identity of every rank (hostIndex filled).
  virtual const std::vector<PeerIdentity>& peers() const = 0;
  // data holds nranks*bytesPerRank; our slot is filled on entry, all slots on return.
  virtual Status allGather(void* data, size_t bytesPerRank) = 0;
  virtual Status barrier() = 0;
  // Ordered messages between two ranks, matched by tag.
  virtual Status send(int peer, int tag, const void* data, size_t bytes) = 0;
  virtual Status recv(int peer, int tag, void* data, size_t bytes) = 0;
  // allGather over `ranks` only (ascending, this rank among them): data holds ranks.size() slots
  // in that order. `tag` (< -1) keeps it apart from other sub-groups' traffic; `abort` replaces
  // the abort flag for this call. What derived bootstraps (deriveBootstrap) are made of.
  virtual Status allGatherSub(const std::vector<int>& ranks, int32_t tag, void* data,
                              size_t bytesPerRank, const std::atomic<bool>* abort) = 0;
  // The flag later calls check (the communicator that owned it is going away: nullptr).
  virtual void setAbortFlag(const std::atomic<bool>* abort) = 0;
};

// A bootstrap over `members` of `parent` (its rank numbers, ascending, this rank among them),
// renumbered 0..members.size()-1 in that order, that reuses the parent's connections and
// identities: no rendezvous root, no new sockets unless a pair never talked before. `salt` must be
// equal on every member and differ between derived bootstraps of one parent (it makes the tag).
// Only allGather and barrier are offered (send/recv are refused).
Status deriveBootstrap(std::shared_ptr<Bootstrap> parent, const std::vector<int>& members,
                       uint64_t salt, const std::atomic<bool>* abort,
                       std::shared_ptr<Bootstrap>* out);

}  // namespace loom::bootstrap
