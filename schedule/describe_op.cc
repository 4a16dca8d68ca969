#include "schedule/describe_op.h"

#include "absl/strings/str_format.h"

namespace zosched {

std::string DescribeOp(const Op& op) {
  return absl::StrFormat("op %d '%s' (device %d, stream %s)", op.id(), op.name(), op.device(),
                         op.stream());
}

std::string DescribePart(Part part, int block) {
  return part == DECODER_BLOCK || part == ADAPTER_PART
             ? absl::StrFormat("%s %d", Part_Name(part), block)
             : Part_Name(part);
}

}  // namespace zosched
