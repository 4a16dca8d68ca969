#include "schedule/compute_profile_flag.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"

namespace zosched {

absl::StatusOr<ComputeProfile> ParseComputeProfileFlag(const std::string& value) {
  ComputeProfile profile = ROOFLINE;
  if (!ComputeProfile_Parse(absl::AsciiStrToUpper(value), &profile)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--compute_profile='%s': expected roofline, zosched_cuda, pytorch_mezo or pytorch_zo2 "
        "(ZO schedules), or pytorch_first_order or megatron_first_order (first-order ones)",
        value));
  }
  return profile;
}

}  // namespace zosched
