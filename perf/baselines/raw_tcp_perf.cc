// iperf-style raw TCP streaming over loopback, the ceiling for loom's tcp transport on this host.
// Two processes (fork) joined by one TCP socket (TCP_NODELAY). For every size S:
//   uni    one side writes S bytes `iters` times, the other reads them, then acks with one byte;
//          bandwidth = iters * S / time.
//   bidir  both sides write and read at once (what a 2-rank ring all-reduce does); bandwidth is
//          per direction. A 2-rank all-reduce's bus bandwidth is bytes sent per rank / time, so
//          bidir is the like-for-like figure and uni the single-stream one.
// Flags as the drivers: -b -e -f -i -n -w -J.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "perf_args.h"

namespace {

using loom::perf::Options;

void die(const char* what) {
  std::perror(what);
  std::exit(2);
}

void writeAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) die("write to peer");
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void readAll(int fd, char* p, size_t n) {
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) die("read from peer");
    p += r;
    n -= static_cast<size_t>(r);
  }
}

// Messages per measurement: at least opts.iters, and enough for ~64 MiB (capped).
int itersFor(const Options& opts, size_t bytes) {
  size_t want = (64u << 20) / bytes;
  if (want > 20000) want = 20000;
  return static_cast<int>(want > static_cast<size_t>(opts.iters) ? want : opts.iters);
}

void stream(int fd, bool send, bool recv, std::vector<char>& out, std::vector<char>& in,
            size_t bytes, int iters) {
  std::thread sender;
  if (send) {
    sender = std::thread([&] {
      for (int i = 0; i < iters; ++i) writeAll(fd, out.data(), bytes);
    });
  }
  if (recv) {
    for (int i = 0; i < iters; ++i) readAll(fd, in.data(), bytes);
  }
  if (sender.joinable()) sender.join();
}

// One measurement; `leader` is the process that times it. Returns seconds (leader only).
double measure(int fd, bool leader, bool bidir, std::vector<char>& out, std::vector<char>& in,
               size_t bytes, int iters) {
  char token = 'g';
  if (leader)
    writeAll(fd, &token, 1);  // start together
  else
    readAll(fd, &token, 1);
  auto t0 = std::chrono::steady_clock::now();
  stream(fd, leader || bidir, !leader || bidir, out, in, bytes, iters);
  if (leader)
    readAll(fd, &token, 1);  // the peer has everything
  else
    writeAll(fd, &token, 1);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void emit(std::FILE* json, const char* backend, size_t bytes, double sec, int iters) {
  double us = sec * 1e6 / iters;
  double gbs = bytes * static_cast<double>(iters) / sec / 1e9;
  std::printf("  %9.2f  %7.3f", us, gbs);
  if (json == nullptr) return;
  std::fprintf(json,
               "{\"coll\":\"stream\",\"backend\":\"%s\",\"nranks\":2,\"launcher\":\"fork\","
               "\"transport\":\"tcp\",\"size\":%zu,\"count\":%zu,\"type\":\"float\",\"redop\":"
               "\"none\",\"root\":-1,\"oop\":{\"time_us\":%.3f,\"algbw\":%.4f,\"busbw\":%.4f,"
               "\"wrong\":0},\"ip\":null}\n",
               backend, bytes, bytes / 4, us, gbs, gbs);
}

int run(const Options& opts, int fd, bool leader) {
  std::FILE* json = nullptr;
  if (leader && !opts.jsonFile.empty()) {
    json = std::fopen(opts.jsonFile.c_str(), "a");
    if (json == nullptr) die(opts.jsonFile.c_str());
  }
  size_t most = opts.maxBytes > 0 ? opts.maxBytes : 1;
  std::vector<char> out(most, 'x'), in(most);
  if (leader) {
    std::printf("# raw_tcp_perf: 2 processes, one loopback TCP socket, TCP_NODELAY\n");
    std::printf("# %10s  %7s  %9s  %7s  %9s  %7s\n", "size", "iters", "uni", "", "bidir", "");
    std::printf("# %10s  %7s  %9s  %7s  %9s  %7s\n", "(B)", "", "(us/msg)", "(GB/s)", "(us/msg)",
                "(GB/s/dir)");
  }
  for (size_t bytes : loom::perf::sweepSizes(opts)) {
    if (bytes == 0) continue;
    int iters = itersFor(opts, bytes);
    int warm = opts.warmup > 0 ? (iters / 10 > 0 ? iters / 10 : 1) : 0;
    if (leader) std::printf("%12zu  %7d", bytes, iters);
    for (bool bidir : {false, true}) {
      if (warm > 0) measure(fd, leader, bidir, out, in, bytes, warm);
      double sec = measure(fd, leader, bidir, out, in, bytes, iters);
      if (leader) emit(json, bidir ? "tcp_stream_bidir" : "tcp_stream", bytes, sec, iters);
    }
    if (leader) {
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  if (json != nullptr) std::fclose(json);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options opts;
  opts.coll = "stream";
  std::string error;
  if (!loom::perf::parseOptions(argc, argv, &opts, &error) || opts.showHelp) {
    if (!error.empty()) std::fprintf(stderr, "%s: %s\n", argv[0], error.c_str());
    std::fprintf(stderr,
                 "usage: %s [-b min] [-e max] [-f factor] [-n iters] [-w warmup] [-J file]\n",
                 argv[0]);
    return error.empty() ? 0 : 2;
  }
  int lfd = socket(AF_INET, SOCK_STREAM, 0);
  if (lfd < 0) die("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) die("bind 127.0.0.1");
  if (listen(lfd, 1) != 0 || getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    die("listen");
  }
  std::fflush(stdout);
  pid_t child = fork();
  if (child < 0) die("fork");
  int fd = -1;
  if (child == 0) {
    close(lfd);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) die("connect");
  } else {
    fd = accept(lfd, nullptr, nullptr);
    if (fd < 0) die("accept");
    close(lfd);
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  int rc = run(opts, fd, child != 0);
  close(fd);
  if (child == 0) _exit(rc);
  int status = 0;
  waitpid(child, &status, 0);
  return rc != 0 ? rc : (WIFEXITED(status) ? WEXITSTATUS(status) : 3);
}
