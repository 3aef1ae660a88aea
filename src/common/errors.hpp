// Error types shared by every layer. Each carries a message that says what was being done.
#pragma once

#include <stdexcept>
#include <string>

namespace p2pbench {

// Exit statuses of the p2pbench executables.
enum ExitStatus : int {
  kExitOk = 0,
  kExitFailure = 1,    // a case failed verification, or a run-time error after start-up
  kExitBadInput = 2,   // bad config, bad flags, impossible request: nothing was measured
};

// Bad user input: the message names the key (or flag) and the offending value.
class InputError : public std::runtime_error {
 public:
  InputError(const std::string& key, const std::string& value, const std::string& why)
      : std::runtime_error(key + " = " + value + ": " + why), key_(key) {}
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// A failure of the system under test or its environment (CUDA, MPI, OS).
class RuntimeFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace p2pbench
