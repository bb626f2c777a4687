// Status: the error type used everywhere inside loom. Code + message; converted to loomResult_t at
// the C API. Messages name the argument, peer rank or host at fault.
#pragma once

#include <sstream>
#include <string>
#include <utility>

namespace loom {

// Values equal the public loomResult_t ones.
enum class Code : int {
  kOk = 0,
  kSystemError = 2,
  kInternalError = 3,
  kInvalidArgument = 4,
  kInvalidUsage = 5,
  kRemoteError = 6,
  kInProgress = 7,
  kTimeout = 8,
  kRevoked = 9,  // the communicator was revoked (loomCommRevoke, or a peer failed)
};

const char* codeName(Code c);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status okStatus() { return Status(); }
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "<code name>: <message>"
  std::string toString() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

template <typename... Args>
std::string strCat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}

template <typename... Args>
Status invalidArgument(Args&&... a) {
  return Status(Code::kInvalidArgument, strCat(std::forward<Args>(a)...));
}
template <typename... Args>
Status revokedError(Args&&... a) {
  return Status(Code::kRevoked, strCat(std::forward<Args>(a)...));
}
template <typename... Args>
Status invalidUsage(Args&&... a) {
  return Status(Code::kInvalidUsage, strCat(std::forward<Args>(a)...));
}
template <typename... Args>
Status systemError(Args&&... a) {
  return Status(Code::kSystemError, strCat(std::forward<Args>(a)...));
}
template <typename... Args>
Status internalError(Args&&... a) {
  return Status(Code::kInternalError, strCat(std::forward<Args>(a)...));
}
template <typename... Args>
Status remoteError(Args&&... a) {
  return Status(Code::kRemoteError, strCat(std::forward<Args>(a)...));
}
template <typename... Args>
Status timeoutError(Args&&... a) {
  return Status(Code::kTimeout, strCat(std::forward<Args>(a)...));
}

// errno text appended: "what: strerror(errno)".
Status errnoStatus(const std::string& what, int err);

}  // namespace loom

#define LOOM_CHECK(expr)               \
  do {                                 \
    ::loom::Status loom_s_ = (expr);   \
    if (!loom_s_.ok()) return loom_s_; \
  } while (0)
