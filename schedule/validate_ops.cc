#include "schedule/validate_ops.h"

#include "base/status_format.h"
#include "base/status_macros.h"
#include "schedule/describe_op.h"
#include "schedule/first_order_model.h"
#include "schedule/validate_first_order_ops.h"
#include "schedule/validate_operands.h"
#include "schedule/validate_streams_and_buffers.h"
#include "schedule/validate_transfers.h"
#include "schedule/validate_zo_dataflow.h"
#include "schedule/validate_zo_ops.h"

namespace zosched {

absl::Status ValidateOpSemantics(const Schedule& schedule) {
  const bool first_order = IsFirstOrder(schedule.strategy().kind());
  const OpFamily& family = first_order ? FirstOrderOpFamily() : ZoOpFamily();
  RETURN_IF_ERROR(ValidateStreams(schedule));
  RETURN_IF_ERROR(ValidateBuffers(schedule, family));
  const OperandChecker operands(schedule, family);
  const TransferChecker transfers(operands);
  for (const Op& op : schedule.ops()) {
    if (op.has_compute()) RETURN_IF_ERROR(operands.CheckCompute(op));
    if (op.has_copy()) RETURN_IF_ERROR(transfers.CheckCopy(op));
    if (op.has_collective()) RETURN_IF_ERROR(transfers.CheckCollective(op));
    if (!op.has_compute() && !op.has_copy() && !op.has_collective()) {
      return InvalidArgument("%s has no kind (expected compute, copy or collective)",
                             DescribeOp(op));
    }
  }
  // A first-order step has no residual streams of one sign, no ZO state,
  // losses or parameter homes.
  return first_order ? absl::OkStatus() : ValidateZoDataflow(schedule);
}

}  // namespace zosched
