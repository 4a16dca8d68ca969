#include "base/gpu_call_error.h"

#include "absl/strings/str_format.h"

namespace zosched {

absl::Status GpuCallError(const std::string& library, int code,
                          const std::string& error_name,
                          const std::string& error_text,
                          const std::string& expression, const char* file,
                          int line) {
  return absl::InternalError(absl::StrFormat(
      "%s error %s (%d): %s\n  in `%s` at %s:%d", library, error_name, code,
      error_text, expression, file, line));
}

}  // namespace zosched
