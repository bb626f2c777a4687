#include "core/status.h"

#include <cstring>

namespace loom {

const char* codeName(Code c) {
  switch (c) {
    case Code::kOk:
      return "success";
    case Code::kSystemError:
      return "system error";
    case Code::kInternalError:
      return "internal error";
    case Code::kInvalidArgument:
      return "invalid argument";
    case Code::kInvalidUsage:
      return "invalid usage";
    case Code::kRemoteError:
      return "remote error";
    case Code::kInProgress:
      return "in progress";
    case Code::kTimeout:
      return "timeout";
    case Code::kRevoked:
      return "communicator revoked";
  }
  return "unknown";
}

std::string Status::toString() const {
  if (ok()) return "success";
  return std::string(codeName(code_)) + ": " + message_;
}

Status errnoStatus(const std::string& what, int err) {
  return Status(Code::kSystemError, what + ": " + std::strerror(err));
}

}  // namespace loom
