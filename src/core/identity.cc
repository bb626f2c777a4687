#include "core/identity.h"

#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <thread>

#include "core/status.h"

namespace loom {

std::string PeerIdentity::describe() const {
  return strCat("rank ", rank, " (host ", hostname, " pid ", pid, ")");
}

PeerIdentity localIdentity() {
  PeerIdentity id;
  id.pid = getpid();
  char h[256] = {0};
  gethostname(h, sizeof(h) - 1);
  id.hostname = h;
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::getline(f, id.bootId);
  struct stat st;
  if (stat("/proc/self/ns/pid", &st) == 0) id.pidNamespace = st.st_ino;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const auto* b = reinterpret_cast<const char*>(&set);
    size_t n = sizeof set;
    while (n > 0 && b[n - 1] == 0) --n;
    id.cpuMask.assign(b, n);
  }
  return id;
}

bool processGone(int pid) {
  if (pid <= 0) return false;
  if (kill(pid, 0) != 0 && errno == ESRCH) return true;
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(f, stat)) return false;
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return false;
  char state = stat[paren + 2];
  return state == 'Z' || state == 'X';
}

void assignHostIndices(std::vector<PeerIdentity>* ids) {
  int next = 0;
  for (size_t i = 0; i < ids->size(); ++i) {
    (*ids)[i].hostIndex = -1;
    for (size_t j = 0; j < i; ++j) {
      if ((*ids)[i].sameHostAs((*ids)[j])) {
        (*ids)[i].hostIndex = (*ids)[j].hostIndex;
        break;
      }
    }
    if ((*ids)[i].hostIndex < 0) (*ids)[i].hostIndex = next++;
  }
}

int usableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int hostCpus(const std::vector<PeerIdentity>& ids, int hostIndex) {
  std::string all;
  for (const PeerIdentity& id : ids) {
    if (id.hostIndex != hostIndex) continue;
    if (id.cpuMask.empty()) return usableCpus();
    if (all.size() < id.cpuMask.size()) all.resize(id.cpuMask.size(), 0);
    for (size_t i = 0; i < id.cpuMask.size(); ++i) all[i] |= id.cpuMask[i];
  }
  if (all.empty()) return usableCpus();
  int n = 0;
  for (char c : all) n += __builtin_popcount(static_cast<unsigned char>(c));
  return std::max(n, 1);
}

}  // namespace loom
