#include "perf_args.h"

#include <cstdio>
#include <cstdlib>

#include "perf_data.h"

namespace loom::perf {
namespace {

bool parseInt(const std::string& text, int* out) {
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') return false;
  *out = static_cast<int>(v);
  return true;
}

bool parseOpList(const std::string& text, std::vector<loomRedOp_t>* ops) {
  ops->clear();
  if (text == "all") {
    for (int i = 0; i < loomNumOps; ++i) ops->push_back(static_cast<loomRedOp_t>(i));
    return true;
  }
  loomRedOp_t op;
  if (!parseOp(text, &op)) return false;
  ops->push_back(op);
  return true;
}

bool parseTypeList(const std::string& text, std::vector<loomDataType_t>* types) {
  types->clear();
  if (text == "all") {
    for (int i = 0; i < loomNumTypes; ++i) types->push_back(static_cast<loomDataType_t>(i));
    return true;
  }
  loomDataType_t dt;
  if (!parseType(text, &dt)) return false;
  types->push_back(dt);
  return true;
}

// Applies one flag (short letter or long name) with its value.
bool applyFlag(const std::string& flag, const std::string& value, Options* o, std::string* err) {
  bool ok = true;
  if (flag == "b" || flag == "minbytes")
    ok = parseSize(value, &o->minBytes);
  else if (flag == "e" || flag == "maxbytes")
    ok = parseSize(value, &o->maxBytes);
  else if (flag == "f" || flag == "stepfactor")
    o->stepFactor = std::atof(value.c_str());
  else if (flag == "i" || flag == "stepbytes")
    ok = parseSize(value, &o->stepBytes);
  else if (flag == "n" || flag == "iters")
    ok = parseInt(value, &o->iters) && o->iters > 0;
  else if (flag == "w" || flag == "warmup_iters")
    ok = parseInt(value, &o->warmup) && o->warmup >= 0;
  else if (flag == "c" || flag == "check")
    ok = parseInt(value, &o->check) && o->check >= 0;
  else if (flag == "o" || flag == "op")
    ok = parseOpList(value, &o->ops);
  else if (flag == "d" || flag == "datatype")
    ok = parseTypeList(value, &o->types);
  else if (flag == "r" || flag == "root")
    ok = parseInt(value, &o->root) && o->root >= 0;
  else if (flag == "z" || flag == "blocking") {
    int v = 0;
    ok = parseInt(value, &v);
    o->blocking = v != 0;
  } else if (flag == "a" || flag == "algo")
    o->algo = value;
  else if (flag == "J" || flag == "json")
    o->jsonFile = value;
  else if (flag == "ranks")
    ok = parseInt(value, &o->ranks) && o->ranks > 0;
  else if (flag == "backend")
    o->backend = value;
  else if (flag == "coll")
    o->coll = value;
  else if (flag == "timeout")
    ok = parseInt(value, &o->timeoutSec) && o->timeoutSec >= 0;
  else if (flag == "bind") {
    ok = value == "auto" || value == "core" || value == "none";
    o->bind = value;
  } else if (flag == "msg-bytes")
    ok = parseSize(value, &o->msgBytes) && o->msgBytes > 0;
  else if (flag == "lockstep") {
    ok = value == "0" || value == "1";
    o->lockstep = value == "1";
  } else if (flag == "pairwise") {
    ok = value == "0" || value == "1";
    o->pairwise = value == "1";
  } else if (flag == "ip-first") {
    ok = value == "0" || value == "1";
    o->ipFirst = value == "1";
  } else if (flag == "t" || flag == "g")
    ok = value == "1";  // one thread, one device per rank
  else {
    *err = "unknown flag -" + flag;
    return false;
  }
  if (!ok) *err = "bad value '" + value + "' for flag -" + flag;
  return ok;
}

}  // namespace

bool parseSize(const std::string& text, size_t* bytes) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end == text.c_str() || v < 0) return false;
  std::string unit(end);
  double mult = 1;
  if (unit == "K" || unit == "k" || unit == "KB" || unit == "KiB")
    mult = 1024.0;
  else if (unit == "M" || unit == "m" || unit == "MB" || unit == "MiB")
    mult = 1024.0 * 1024;
  else if (unit == "G" || unit == "g" || unit == "GB" || unit == "GiB")
    mult = 1024.0 * 1024 * 1024;
  else if (!unit.empty() && unit != "B")
    return false;
  *bytes = static_cast<size_t>(v * mult);
  return true;
}

bool parseOptions(int argc, char** argv, Options* opts, std::string* error) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      opts->showHelp = true;
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      *error = "unexpected argument '" + arg + "'";
      return false;
    }
    std::string flag, value;
    bool haveValue = false;
    if (arg[1] == '-') {  // --name value or --name=value
      size_t eq = arg.find('=');
      flag = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
        haveValue = true;
      }
    } else {  // -b 8 or -b8
      flag = arg.substr(1, 1);
      if (arg.size() > 2) {
        value = arg.substr(2);
        haveValue = true;
      }
    }
    if (!haveValue) {
      if (i + 1 >= argc) {
        *error = "flag " + arg + " needs a value";
        return false;
      }
      value = argv[++i];
    }
    if (!applyFlag(flag, value, opts, error)) return false;
  }
  if (opts->maxBytes < opts->minBytes) {
    *error = "-e (max bytes) is smaller than -b (min bytes)";
    return false;
  }
  if (opts->stepFactor < 1 || (opts->stepFactor == 1 && opts->stepBytes == 0)) {
    *error = "-f must be > 1 (or -i > 0 for additive steps)";
    return false;
  }
  return true;
}

std::vector<size_t> sweepSizes(const Options& opts) {
  std::vector<size_t> sizes;
  for (size_t s = opts.minBytes; s <= opts.maxBytes;) {
    sizes.push_back(s);
    size_t next =
        opts.stepFactor > 1 ? static_cast<size_t>(s * opts.stepFactor) : s + opts.stepBytes;
    if (next <= s) next = s + 1;
    s = next;
  }
  return sizes;
}

void printUsage(const char* prog) {
  std::printf(
      "usage: %s [flags]  (nccl-tests flags; K/M/G sizes are powers of 1024)\n"
      "  -b <bytes>   min size (32M)          -e <bytes>  max size (32M)\n"
      "  -f <factor>  multiplicative step     -i <bytes>  additive step (1M) when -f is 1\n"
      "  -n <iters>   timed iterations (20)   -w <iters>  warm-up iterations (1)\n"
      "  -c <iters>   checked iterations (1; 0 = no check, #wrong N/A)\n"
      "  -o <op>      sum|prod|max|min|avg|all (sum)\n"
      "  -d <type>    int8|uint8|int32|uint32|int64|uint64|half|float|double|bfloat16|all (float)\n"
      "  -r <root>    root rank (0)           -z <0|1>    1: blocking calls (NULL stream)\n"
      "  -a <algo>    force a loom algorithm: sets LOOM_ALGO=<coll>:<algo> (or the value as is\n"
      "               when it contains ':') before the communicator is made\n"
      "  -J <file>    write one JSON object per row to file\n"
      "  --ranks N    fork N local ranks (no MPI needed); under mpirun the ranks are MPI's\n"
      "  --backend B  loom (default), mpi (MPI collectives; needs mpirun), gloo_ring, gloo_hd\n"
      "  --timeout S  kill all ranks after S seconds (--ranks launcher)\n"
      "  --bind B     --ranks launcher: core (rank r on the r-th CPU we may use, round robin),\n"
      "               none (the scheduler places them), auto (default: core when the ranks fit\n"
      "               the CPUs, as mpirun --bind-to core does for 2 ranks; else none)\n"
      "  --msg-bytes B  sendrecv only: send and receive each buffer as messages of at most B\n"
      "               bytes, all in one group (as a pipelined schedule's chunks go)\n"
      "  --lockstep 1 with --msg-bytes: each message its own group, the next one posted when\n"
      "               this one's send and receive are done (as a ring's steps go)\n"
      "  --pairwise 1 sendrecv only: each rank exchanges with rank ^ 1 (a partner each way, as\n"
      "               Rabenseifner's steps go) instead of sending to the next rank and receiving\n"
      "               from the one before (as a ring's steps go); needs an even rank count\n"
      "  --ip-first 1 time each size in place first, then out of place (nccl-tests' order,\n"
      "               the default, is out of place first; the table's columns stay in order)\n"
      "Run as root under Open MPI: mpirun --allow-run-as-root --oversubscribe -np N %s ...\n",
      prog, prog);
}

}  // namespace loom::perf
