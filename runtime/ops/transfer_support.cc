#include "runtime/ops/transfer_support.h"

#include "absl/strings/str_format.h"
#include "schedule/describe_op.h"

namespace zosched {

absl::Status CheckTransferSupported(const Op& op, std::string_view runtime) {
  if (op.has_copy() && op.copy().direction() == DEVICE_TO_DEVICE) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is a peer copy; %s moves data between devices only through collectives",
        DescribeOp(op), runtime));
  }
  if (op.has_collective() && op.collective().kind() != ALL_GATHER) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is a %s; %s runs ALL_GATHER collectives only", DescribeOp(op),
                        CollectiveKind_Name(op.collective().kind()), runtime));
  }
  return absl::OkStatus();
}

}  // namespace zosched
