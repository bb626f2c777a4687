// Guard for untrusted hwloc XML: libhwloc 2.9 itself can crash on some malformed files (found by
// fuzz_hwloc_xml: a NULL bitmap in hwloc_bitmap_or inside hwloc_topology_load). Before loading an
// XML in this process, a forked child loads it once; a child killed by a signal means "hwloc
// cannot read this file", reported as an error instead of taking the caller down. The child only
// runs hwloc (glibc's malloc is fork-safe), its stderr goes to /dev/null, and it has 20 s.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "topo/node.h"

#ifdef LOOM_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace loom::topo {

namespace {
constexpr int kLoaded = 42;  // child exit codes no crash handler uses
constexpr int kCleanFailure = 43;
}  // namespace

Status hwlocXmlPreflight(const std::string& xml, const std::string& source) {
#ifndef LOOM_HAVE_HWLOC
  return Status();
#else
  pid_t pid = fork();
  if (pid < 0) return errnoStatus("fork for the hwloc XML check of " + source, errno);
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, 2);
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0) _exit(kCleanFailure);
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    int rc = hwloc_topology_set_xmlbuffer(t, xml.data(), static_cast<int>(xml.size()));
    if (rc == 0) rc = hwloc_topology_load(t);
    hwloc_topology_destroy(t);
    _exit(rc == 0 ? kLoaded : kCleanFailure);
  }
  int status = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return errnoStatus("waitpid for the hwloc XML check", errno);
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return invalidArgument(source, ": hwloc did not finish loading this XML in 20 s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Any other end (a signal, or a sanitizer's exit code after it caught the crash) is a crash.
  if (!WIFEXITED(status) ||
      (WEXITSTATUS(status) != kLoaded && WEXITSTATUS(status) != kCleanFailure)) {
    return invalidArgument(source, ": hwloc crashed (",
                           WIFSIGNALED(status) ? "signal " : "exit status ",
                           WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
                           ") loading this XML: malformed hwloc topology XML");
  }
  return Status();  // a clean failure is reported by the real load with its own message
#endif
}

}  // namespace loom::topo
