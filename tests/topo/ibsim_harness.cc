#include "ibsim_harness.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace loom::topo::testing {

namespace {
const char* const kPreload = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so";
std::atomic<int> counter{0};

std::string findExe(const char* name) {
  const char* dirs[] = {"/usr/bin/",        "/usr/sbin/", "/usr/local/bin/",
                        "/usr/local/sbin/", "/bin/",      "/sbin/"};
  for (const char* d : dirs) {
    std::string p = std::string(d) + name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool waitPid(pid_t pid, int timeoutMs, int* status) {
  for (int waited = 0; waited <= timeoutMs; waited += 10) {
    pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}
}  // namespace

std::string Ibsim::unavailableReason() {
  if (findExe("ibsim").empty()) return "ibsim not installed (Debian package ibsim-utils)";
  if (findExe("ibnetdiscover").empty()) return "ibnetdiscover not installed (infiniband-diags)";
  if (access(kPreload, R_OK) != 0) return std::string(kPreload) + " missing (libumad2sim0)";
  return "";
}

const char* Ibsim::preloadLibrary() { return kPreload; }

std::string Ibsim::log() const { return dir_.empty() ? "" : readFile(dir_ + "/ibsim.log"); }

int Ibsim::promptCount() const {
  std::string l = log();
  int n = 0;
  for (size_t p = l.find("sim>"); p != std::string::npos; p = l.find("sim>", p + 1)) ++n;
  return n;
}

std::string Ibsim::start(const std::string& netText) {
  signal(SIGPIPE, SIG_IGN);  // ibsim may die; a write to its console must not kill the test
  char tmpl[] = "/tmp/loom-ibsim-XXXXXX";
  if (!mkdtemp(tmpl)) return "mkdtemp failed";
  dir_ = tmpl;
  sock_ = "loomtopo-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  std::ofstream(dir_ + "/net.txt") << netText;
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  std::string exe = findExe("ibsim"), net = dir_ + "/net.txt", logPath = dir_ + "/ibsim.log";
  pid_ = fork();
  if (pid_ == 0) {
    dup2(fds[0], 0);
    int lf = open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(lf, 1);
    dup2(lf, 2);
    close(fds[1]);
    if (chdir(dir_.c_str()) != 0) _exit(126);
    setenv("IBSIM_SOCKNAME", sock_.c_str(), 1);
    // Raised limits so generated fabrics a little over the defaults still load.
    execl(exe.c_str(), "ibsim", "-S", "1024", "-N", "8192", "-P", "65536", "-s", net.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[0]);
  stdinFd_ = fds[1];
  for (int i = 0; i < 1000; ++i) {  // up to 10 s
    if (promptCount() > 0) return "";
    int st = 0;
    if (waitpid(pid_, &st, WNOHANG) == pid_) {
      pid_ = -1;
      return "ibsim exited at start: " + log();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return "ibsim did not become ready in 10 s: " + log();
}

std::string Ibsim::discover(const std::string& args, std::string* out) {
  std::string outPath = dir_ + "/discover.out", errPath = dir_ + "/discover.err";
  std::string exe = findExe("ibnetdiscover");
  std::vector<std::string> argv = {"ibnetdiscover"};
  std::istringstream as(args);
  for (std::string a; as >> a;) argv.push_back(a);
  pid_t pid = fork();
  if (pid == 0) {
    int of = open(outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int ef = open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(of, 1);
    dup2(ef, 2);
    setenv("IBSIM_SOCKNAME", sock_.c_str(), 1);
    setenv("LD_PRELOAD", kPreload, 1);
    std::vector<char*> cargv;
    for (std::string& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    execv(exe.c_str(), cargv.data());
    _exit(127);
  }
  int st = 0;
  if (!waitPid(pid, 60000, &st)) {
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return "ibnetdiscover did not finish in 60 s";
  }
  *out = readFile(outPath);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    return "ibnetdiscover failed (status " + std::to_string(st) + "): " + readFile(errPath);
  }
  return "";
}

std::string Ibsim::console(const std::string& cmd) {
  int before = promptCount();
  std::string line = cmd + "\n";
  if (write(stdinFd_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    return "write to ibsim console failed";
  }
  for (int i = 0; i < 500; ++i) {
    if (promptCount() > before) return "";
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return "ibsim console did not answer \"" + cmd + "\": " + log();
}

Ibsim::~Ibsim() {
  if (pid_ > 0) {
    if (stdinFd_ >= 0) {
      const char q[] = "quit\n";
      (void)!write(stdinFd_, q, sizeof(q) - 1);
      close(stdinFd_);
    }
    int st = 0;
    if (!waitPid(pid_, 3000, &st)) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &st, 0);
    }
  }
  if (!dir_.empty()) {
    for (const char* f : {"/net.txt", "/ibsim.log", "/discover.out", "/discover.err"}) {
      unlink((dir_ + f).c_str());
    }
    rmdir(dir_.c_str());
  }
}

}  // namespace loom::topo::testing
