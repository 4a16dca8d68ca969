// CHECK(condition) << "context": abort with file:line, the condition's text
// and the streamed context when an invariant that would be a bug does not
// hold. Not for bad input (return an absl::Status for that).
//
// Debian's Abseil (20220623) predates absl/log's CHECK.
#pragma once

#include <sstream>

namespace zosched {
namespace check_internal {

// Collects the message; its destructor prints it to stderr and aborts.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  [[noreturn]] ~CheckFailure();
  std::ostream& stream() { return message_; }

 private:
  std::ostringstream message_;
};

}  // namespace check_internal
}  // namespace zosched

#define CHECK(condition) \
  while (!(condition))   \
  ::zosched::check_internal::CheckFailure(__FILE__, __LINE__, #condition).stream()
