// Setup and teardown of the shm transport: create our segment, let every peer map it, unlink it.
//
// Two collective rounds (every rank takes part, even without shm peers, and every rank takes the
// same path because each round's outcome is gathered):
//   1. each rank creates and initialises its own segment, then all gather an ok/failed record;
//   2. each rank maps its peers' segments and checks them, then all gather again.
// After round 2 (whatever its outcome) every rank unlinks its own name; on failure it also unlinks
// its peers' names, so a rank that died half way leaves nothing behind in /dev/shm.
// The single-copy probe runs in round 2: after mapping a peer's segment a rank reads the peer's
// probe word with process_vm_readv and writes the outcome into the ring from that peer; after the
// round every sender reads the outcome of its rings.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <new>

#include "core/agree.h"
#include "core/log.h"
#include "core/params.h"
#include "transports/shm/transport.h"

namespace loom::transport::shm {
namespace {

constexpr uint64_t kMinRingBytes = 4096;

std::atomic<int> g_failProbeRank{-1};

size_t controlBytes(int nranks) {
  return alignUp(offsetof(ControlBlock, ringOffset) + sizeof(uint64_t) * nranks, 4096);
}
size_t ringStride(uint64_t ringBytes) { return kRingDataOffset + alignUp(ringBytes, 4096); }

Status agree(const SetupArgs& args, const Status& local, const char* step) {
  return agreeOnOutcome(args.allGather, args.rank, args.nranks, args.ids, local,
                        strCat("shm setup (", step, ")"), args.abortFlag);
}

Status validate(const SetupArgs& args) {
  if (static_cast<int>(args.ids.size()) != args.nranks)
    return invalidArgument("shm setup: ids has ", args.ids.size(), " entries, nranks is ",
                           args.nranks);
  if (args.commTag.empty() || args.commTag.find('/') != std::string::npos)
    return invalidArgument("shm setup: commTag '", args.commTag, "' is empty or contains '/'");
  std::vector<bool> seen(args.nranks, false);
  for (int p : args.peers) {
    if (p < 0 || p >= args.nranks || p == args.rank || seen[p])
      return invalidArgument("shm setup: peers contains bad or repeated rank ", p);
    seen[p] = true;
    if (!args.ids[p].sameHostAs(args.ids[args.rank]))
      return invalidArgument("shm setup: peer ", args.ids[p].describe(), " is not on the host of ",
                             args.ids[args.rank].describe());
  }
  return Status();
}

}  // namespace

Mapping::~Mapping() {
  if (base_) munmap(base_, bytes_);
}

ShmTransport::ShmTransport(const SetupArgs& args)
    : rank_(args.rank),
      nranks_(args.nranks),
      commTag_(args.commTag),
      abortFlag_(args.abortFlag),
      ownerPid_(getpid()),
      peerIndex_(args.nranks, -1) {
  std::vector<int> sorted = args.peers;
  std::sort(sorted.begin(), sorted.end());
  peers_.resize(sorted.size());
  for (size_t i = 0; i < sorted.size(); ++i) {
    peers_[i].rank = sorted[i];
    peers_[i].id = args.ids[sorted[i]];
    peerIndex_[sorted[i]] = static_cast<int>(i);
  }
}

Status ShmTransport::create(const SetupArgs& args, std::unique_ptr<Transport>* out) {
  if (!out) return invalidArgument("createShmTransport: out is null");
  if (!args.allGather) return invalidArgument("createShmTransport: allGather is empty");
  if (args.nranks < 1 || args.rank < 0 || args.rank >= args.nranks)
    return invalidArgument("createShmTransport: rank ", args.rank, " out of range for nranks ",
                           args.nranks);
  // Bad arguments on one rank still take part in the first round, so the others fail promptly
  // (naming this rank) instead of waiting in allGather until their timeout.
  Status valid = validate(args);
  if (!valid.ok()) {
    (void)agree(args, valid, "check arguments");
    return valid;
  }
  std::unique_ptr<ShmTransport> t(new ShmTransport(args));
  LOOM_CHECK(t->setup(args));
  // Every rank of the communicator on this host: the one-host direct all-reduce too. Every rank
  // sees the same peers and parameters, so all make it or none does.
  const int64_t directBytes = params::shmDirectBytes();
  if (args.nranks > 1 && static_cast<int>(args.peers.size()) == args.nranks - 1 &&
      directBytes > 0) {
    ShmDirect::Args d;
    d.rank = args.rank;
    d.nranks = args.nranks;
    d.tag = args.commTag;
    d.allGather = args.allGather;
    d.ids = args.ids;
    d.abortFlag = args.abortFlag;
    d.revokedFlag = args.revokedFlag;
    d.timeoutMs = args.timeoutMs;
    d.spinUs = params::spinUs();
    d.peerCheckMs = params::peerCheckMs();
    d.maxBytes = static_cast<uint64_t>(directBytes);
    d.checksum = params::checksum() != 0;
    ShmTransport* raw = t.get();
    d.peerCheck = [raw] { return raw->checkCalls(); };
    LOOM_CHECK(ShmDirect::create(d, &t->direct_));
    LOOM_INFO(PLAN, "allreduce and barrier up to ", directBytes,
              " bytes may take the one-host direct path (LOOM_SHM_DIRECT_BYTES)");
  }
  int cma = 0;
  for (const Peer& p : t->peers_) cma += p.cmaSend ? 1 : 0;
  LOOM_INFO(NET, "shm transport ready: ", t->peers_.size(), " peers, ring ", t->ringBytes_,
            " bytes, single copy (CMA, LOOM_SHM_CMA=", params::shmCma(), ") to ", cma, " of them");
  *out = std::move(t);
  return Status();
}

Status ShmTransport::setup(const SetupArgs& args) {
  spinUs_ = std::max<int64_t>(params::spinUs(), 0);
  checksum_ = params::checksum() != 0;
  int64_t want = params::shmBufferBytes();
  ringBytes_ = alignUp(static_cast<uint64_t>(std::max<int64_t>(want, kMinRingBytes)), kSlot);
  Status created = readCmaParams();
  if (created.ok() && !peers_.empty()) created = createOwnSegment(args);
  Status st = agree(args, created, "create segments");
  if (st.ok()) st = agree(args, peers_.empty() ? Status() : mapPeers(args), "map peer segments");
  unlinkNames(/*includePeers=*/!st.ok());
  if (st.ok()) adoptCmaStates();
  return st;
}

Status ShmTransport::readCmaParams() {
  std::string mode = params::shmCma();
  if (mode == "off") {
    cmaMode_ = CmaMode::kOff;
  } else if (mode == "auto" || mode.empty()) {
    cmaMode_ = CmaMode::kAuto;
  } else if (mode == "on") {
    cmaMode_ = CmaMode::kOn;
  } else {
    return invalidArgument("LOOM_SHM_CMA='", mode, "' is not auto, on or off");
  }
  int64_t threshold = params::shmCmaThreshold();
  if (threshold < 0) return invalidArgument("LOOM_SHM_CMA_THRESHOLD=", threshold, " is negative");
  cmaThreshold_ = std::max<uint64_t>(static_cast<uint64_t>(threshold), 1);
  if (cmaMode_ != CmaMode::kOff) {
    cmaBlock_.reset(new (std::nothrow) uint8_t[kCmaBlockBytes]);
    if (!cmaBlock_) return systemError("shm: cannot allocate ", kCmaBlockBytes, " bytes");
  }
  return Status();
}

// Reads the peer's probe word with process_vm_readv and records in the ring from that peer whether
// it may send single-copy to us.
Status ShmTransport::probeCma(Peer& p) {
  uint32_t state = kCmaUnusable;
  if (cmaMode_ != CmaMode::kOff) {
    const ControlBlock* cb = p.remote->control();
    std::string why;
    int fail = g_failProbeRank.load();
    if (fail == rank_ || fail == -2) {
      why = strCat("process_vm_readv: ", std::strerror(EPERM), " (test hook)");
    } else {
      uint64_t got = 0;
      iovec local{&got, sizeof got};
      iovec remote{reinterpret_cast<void*>(cb->probeAddr), sizeof got};
      ssize_t n = process_vm_readv(p.id.pid, &local, 1, &remote, 1, 0);
      if (n < 0)
        why = strCat("process_vm_readv: ", std::strerror(errno));
      else if (n != sizeof got || got != cb->probeValue)
        why = "process_vm_readv read the wrong bytes";
    }
    if (why.empty()) {
      p.cmaRecv = true;
      state = kCmaUsable;
      LOOM_INFO(NET, "shm: ", p.id.describe(), " -> rank ", rank_, ": single copy (CMA) for ",
                "messages of at least ", cmaThreshold_, " bytes");
    } else if (cmaMode_ == CmaMode::kOn) {
      return systemError("shm: LOOM_SHM_CMA=on but rank ", rank_, " cannot read the memory of ",
                         p.id.describe(), " (", why, "); use LOOM_SHM_CMA=auto or off");
    } else {
      LOOM_INFO(NET, "shm: ", p.id.describe(), " -> rank ", rank_,
                ": copy path through the ring (CMA probe failed: ", why, ")");
    }
  }
  p.recvCtr->cmaState.store(state, std::memory_order_release);
  return Status();
}

void ShmTransport::adoptCmaStates() {
  for (Peer& p : peers_) {
    p.cmaSend = p.sendCtr->cmaState.load(std::memory_order_acquire) == kCmaUsable;
  }
}

bool ShmTransport::singleCopyTo(int peer) const {
  if (peer < 0 || peer >= nranks_ || peerIndex_[peer] < 0) return false;
  return peers_[peerIndex_[peer]].cmaSend;
}

void ShmTransport::failCmaProbeForTesting(int rank) { g_failProbeRank.store(rank); }

Status ShmTransport::createOwnSegment(const SetupArgs& args) {
  std::string name = segmentName(commTag_, rank_);
  size_t bytes = controlBytes(nranks_) + peers_.size() * ringStride(ringBytes_);
  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0 && errno == EEXIST) {
    LOOM_WARN(NET, "shm: removing stale segment /dev/shm", name);
    shm_unlink(name.c_str());
    fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  }
  if (fd < 0) return errnoStatus(strCat("shm_open(", name, ") on rank ", rank_), errno);
  ownNameLinked_ = true;
  // Reserve the pages now: tmpfs that runs out later would SIGBUS us on first touch.
  int err = ftruncate(fd, static_cast<off_t>(bytes)) == 0 ? 0 : errno;
  if (err == 0) err = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (err != 0) {
    close(fd);
    return errnoStatus(strCat("reserving ", bytes, " bytes of /dev/shm for ", name, " (",
                              peers_.size(), " peers x LOOM_SHM_BUFFER_BYTES=", ringBytes_, ")"),
                       err);
  }
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  err = errno;
  close(fd);
  if (base == MAP_FAILED) return errnoStatus(strCat("mmap(", name, ", ", bytes, ")"), err);
  own_ = std::make_unique<Mapping>(static_cast<uint8_t*>(base), bytes);

  // The file is zero-filled, so counters and doorbell start at 0.
  ControlBlock* cb = own_->control();
  cb->segmentBytes = bytes;
  cb->ringBytes = ringBytes_;
  cb->rank = rank_;
  cb->nranks = nranks_;
  cb->pid = getpid();
  probeWord_ = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) *
                   0x9e3779b97f4a7c15ull |
               1;
  cb->probeAddr = reinterpret_cast<uint64_t>(&probeWord_);
  cb->probeValue = probeWord_;
  size_t off = controlBytes(nranks_);
  for (Peer& p : peers_) {
    cb->ringOffset[p.rank] = off;
    p.recvCtr = new (own_->base() + off) RingCounters();
    p.recvData = own_->base() + off + kRingDataOffset;
    off += ringStride(ringBytes_);
  }
  std::atomic_thread_fence(std::memory_order_release);
  cb->magic = kSegmentMagic;
  return makeBell();
}

// Our wake-up FIFO (transport.h, "Waiting"), made before the peers map our segment.
Status ShmTransport::makeBell() {
  const std::string path = bellPath(commTag_, rank_);
  int rc = mkfifo(path.c_str(), 0600);
  if (rc != 0 && errno == EEXIST) {
    unlink(path.c_str());  // stale, like a leftover segment
    rc = mkfifo(path.c_str(), 0600);
  }
  if (rc != 0) return errnoStatus(strCat("mkfifo(", path, ") on rank ", rank_), errno);
  ownBell_.reset(open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
  if (!ownBell_.valid()) return errnoStatus(strCat("open(", path, ") on rank ", rank_), errno);
  return Status();
}

Status ShmTransport::mapPeers(const SetupArgs& args) {
  for (Peer& p : peers_) {
    std::string name = segmentName(commTag_, p.rank);
    int fd = shm_open(name.c_str(), O_RDWR, 0);
    if (fd < 0) return errnoStatus(strCat("shm_open(", name, ") of peer ", p.id.describe()), errno);
    struct stat st;
    if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < controlBytes(nranks_)) {
      close(fd);
      return internalError("shm segment ", name, " of peer ", p.id.describe(), " is truncated");
    }
    size_t bytes = static_cast<size_t>(st.st_size);
    void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int err = errno;
    close(fd);
    if (base == MAP_FAILED) return errnoStatus(strCat("mmap(", name, ", ", bytes, ")"), err);
    p.remote = std::make_unique<Mapping>(static_cast<uint8_t*>(base), bytes);
    const ControlBlock* cb = p.remote->control();
    uint64_t off = cb->ringOffset[rank_];
    if (cb->magic != kSegmentMagic || cb->rank != p.rank || cb->nranks != nranks_ || off == 0 ||
        cb->ringBytes < kMinRingBytes || cb->ringBytes % kSlot != 0 ||
        off + kRingDataOffset + cb->ringBytes > bytes) {
      return internalError("shm segment ", name, " of peer ", p.id.describe(),
                           " does not match (magic, rank, nranks, ring size or no ring for rank ",
                           rank_, ")");
    }
    if (cb->pid != p.id.pid) {
      return internalError("shm segment ", name, " was made by pid ", cb->pid, ", but ",
                           p.id.describe(), " is expected");
    }
    const std::string bell = bellPath(commTag_, p.rank);
    p.bell.reset(open(bell.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
    if (!p.bell.valid())
      return errnoStatus(strCat("open(", bell, ") of peer ", p.id.describe()), errno);
    p.sendCtr = reinterpret_cast<RingCounters*>(p.remote->base() + off);
    p.sendData = p.remote->base() + off + kRingDataOffset;
    p.sendRingBytes = cb->ringBytes;
    LOOM_CHECK(probeCma(p));
  }
  return Status();
}

void ShmTransport::unlinkNames(bool includePeers) {
  if (ownNameLinked_) {
    shm_unlink(segmentName(commTag_, rank_).c_str());
    unlink(bellPath(commTag_, rank_).c_str());
    ownNameLinked_ = false;
  }
  if (includePeers) {
    for (const Peer& p : peers_) {
      shm_unlink(segmentName(commTag_, p.rank).c_str());
      unlink(bellPath(commTag_, p.rank).c_str());
    }
  }
}

ShmTransport::~ShmTransport() {
  // A forked child (e.g. a data-loader worker) inherits the mapping; only the owner says goodbye.
  if (getpid() != ownerPid_) return;
  markState(abortFlag_ && abortFlag_->load() ? kAborted : kClosed);
  unlinkNames(false);
}

}  // namespace loom::transport::shm

namespace loom::transport {

Status createShmTransport(const SetupArgs& args, std::unique_ptr<Transport>* out) {
  return shm::ShmTransport::create(args, out);
}

}  // namespace loom::transport
