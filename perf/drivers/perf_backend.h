// What a perf driver measures: loom, or a baseline library run with the same sizes, buffers,
// checks and process layout (Open MPI's collectives, Gloo's all-reduce).
#pragma once

#include <memory>
#include <string>

#include "perf_args.h"
#include "perf_colls.h"
#include "perf_coord.h"

namespace loom::perf {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  // Empty when the backend can run this combination, else why not (the row prints N/A).
  virtual std::string unsupported(const CollCall& call) const = 0;
  // Issues one call (may return before it completes, as on a loom stream). 0 on success.
  virtual int run(const CollCall& call) = 0;
  // Waits for every issued call. 0 on success.
  virtual int sync() = 0;
  // Text of the last failure.
  virtual std::string lastError() const = 0;
};

// Makes the backend opts.backend on this rank (collective over coord: every rank calls it).
// Returns nullptr with *error set when it is unknown, not built, or fails to start.
std::unique_ptr<Backend> makeBackend(const Options& opts, Coord& coord, std::string* error);

// Per backend family (each returns nullptr with *error when not compiled in).
std::unique_ptr<Backend> makeLoomBackend(const Options& opts, Coord& coord, std::string* error);
std::unique_ptr<Backend> makeMpiBackend(const Options& opts, Coord& coord, std::string* error);
std::unique_ptr<Backend> makeGlooBackend(const Options& opts, Coord& coord, std::string* error);

}  // namespace loom::perf
