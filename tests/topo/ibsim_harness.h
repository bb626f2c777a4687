// Runs a real ibsim (ibsim-utils) on a net file and real ibnetdiscover (infiniband-diags) against
// it through libumad2sim.so. Each instance uses its own temp dir and its own IBSIM_SOCKNAME
// (ibsim and umad2sim meet on abstract unix sockets "@<name>:..."), so tests can run in parallel.
#pragma once

#include <sys/types.h>

#include <string>

namespace loom::topo::testing {

class Ibsim {
 public:
  Ibsim() = default;
  ~Ibsim();
  Ibsim(const Ibsim&) = delete;
  Ibsim& operator=(const Ibsim&) = delete;

  // Why ibsim cannot run here ("" when it can): missing binaries or preload library.
  static std::string unavailableReason();
  // Writes the net file and starts `ibsim -s`; waits until its console is ready.
  // Returns "" or an error text (with ibsim's log).
  std::string start(const std::string& netText);
  // Runs `ibnetdiscover <args>` under the preload; stdout into *out. Returns "" or an error text.
  std::string discover(const std::string& args, std::string* out);
  // Sends one console command ("Unlink \"S-...\"[3]") and waits for the next prompt.
  std::string console(const std::string& cmd);
  std::string log() const;
  // IBSIM_SOCKNAME of this instance, and the preload library, for running other diags under it.
  const std::string& sockName() const { return sock_; }
  static const char* preloadLibrary();

 private:
  int promptCount() const;
  std::string dir_, sock_;
  pid_t pid_ = -1;
  int stdinFd_ = -1;
};

}  // namespace loom::topo::testing
