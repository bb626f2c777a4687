// Who a rank is and where it runs. Exchanged by the bootstrap; transports use it to decide that two
// ranks share a host (same hostname AND boot id AND pid namespace: two containers on one host have
// different hostnames or pid namespaces, so they are told apart) and to name a peer in errors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace loom {

struct PeerIdentity {
  int rank = -1;
  int pid = 0;
  std::string hostname;
  std::string bootId;         // /proc/sys/kernel/random/boot_id
  uint64_t pidNamespace = 0;  // inode of /proc/self/ns/pid
  std::string address;  // "ip" of the interface the bootstrap chose (tcp transport listens there)
  int hostIndex = -1;   // equal for ranks on the same host (0..nhosts-1, by first rank)
  std::string cpuMask;  // the CPUs it may run on: its affinity mask's bytes (cpu_set_t), trailing
                        // zero bytes dropped; empty if unknown

  bool sameHostAs(const PeerIdentity& o) const {
    return hostname == o.hostname && bootId == o.bootId && pidNamespace == o.pidNamespace;
  }
  // "rank 3 (host node7 pid 1234)"
  std::string describe() const;
};

// Identity of the calling process (address and hostIndex left empty).
PeerIdentity localIdentity();

// True when the process `pid` (on this host) no longer runs: gone (ESRCH) or a zombie nobody has
// reaped yet. Used to name dead same-host peers.
bool processGone(int pid);

// Fills hostIndex for every entry.
void assignHostIndices(std::vector<PeerIdentity>* ids);

// CPUs the calling process may run on (its affinity mask; the online CPUs if that fails).
int usableCpus();

// CPUs the ranks on host `hostIndex` may run on together: the union of their affinity masks. Ranks
// pinned to a core each (mpirun --bind-to core) have one CPU each but do not share one. Where a
// rank's mask is unknown, this process's usableCpus() counts instead.
int hostCpus(const std::vector<PeerIdentity>& ids, int hostIndex);

}  // namespace loom
