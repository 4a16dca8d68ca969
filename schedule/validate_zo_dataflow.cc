#include "schedule/validate_zo_dataflow.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "base/status_format.h"
#include "base/status_macros.h"
#include "schedule/compute_op_model.h"
#include "schedule/describe_op.h"
#include "schedule/loss_layout.h"
#include "schedule/param_homes.h"
#include "schedule/validate_operands.h"

namespace zosched {
namespace {

// The residual streams and the updates.
absl::Status CheckStreamsAndUpdates(const Schedule& s) {
  const int layers = s.model().num_layers();
  // One residual stream: where it is, and how far it has come.
  struct Path {
    Sign sign;
    int direction;
    int first_example, examples;
    int next_block;  // the block it goes through next; layers when done
    const Op* last;
  };
  // Per device: elements of each (part, block) updated so far in the step.
  std::vector<absl::flat_hash_map<std::pair<int, int>, std::vector<std::pair<int64_t, int64_t>>>>
      updated(s.devices_size());
  std::vector<absl::flat_hash_map<std::pair<absl::string_view, int64_t>, Path>> paths(
      s.devices_size());
  for (const Op& op : s.ops()) {
    if (!op.has_compute()) continue;
    const ComputeOp& c = op.compute();
    if (c.kind() == UPDATE) {
      auto& spans = updated[op.device()][{c.params().part(), c.params().block()}];
      const int64_t b = c.params().first_element(), e = b + c.params().elements();
      for (const auto& [ub, ue] : spans) {
        if (b < ue && ub < e) {
          return InvalidArgument(
              "%s updates elements [%d, %d) of %s, which the device already "
              "updated this step (each parameter takes one update per step)",
              DescribeOp(op), std::max(b, ub), std::min(e, ue),
              DescribePart(c.params().part(), c.params().block()));
        }
      }
      spans.emplace_back(b, e);
      continue;
    }
    if (!IsZoForward(c.kind())) continue;
    const std::pair<absl::string_view, int64_t> key(c.activations().buffer(),
                                                    c.activations().offset_bytes());
    auto& device_paths = paths[op.device()];
    if (c.kind() == EMBED) {
      device_paths[key] = {c.sign(), c.direction(), c.first_example(), c.examples(), 0, &op};
      continue;
    }
    auto it = device_paths.find(key);
    const int wanted_block = c.kind() == HEAD_LOSS ? layers : c.params().block();
    if (it == device_paths.end()) {
      return InvalidArgument(
          "%s reads the residual stream %s, which no EMBED of the device started "
          "before it",
          DescribeOp(op), RangeText(c.activations()));
    }
    Path& path = it->second;
    if (path.sign != c.sign() || path.direction != c.direction() ||
        path.first_example != c.first_example() || path.examples != c.examples()) {
      return InvalidArgument(
          "%s: sign %s, direction %d, examples [%d, +%d); but the residual stream %s it "
          "continues is the %s path along direction %d of examples [%d, +%d) (from %s); check "
          "the op's sign, direction and examples",
          DescribeOp(op), Sign_Name(c.sign()), c.direction(), c.first_example(), c.examples(),
          RangeText(c.activations()), Sign_Name(path.sign), path.direction, path.first_example,
          path.examples, DescribeOp(*path.last));
    }
    if (path.next_block != wanted_block) {
      return InvalidArgument(
          "%s: the residual stream %s has passed blocks 0 to %d (last %s), so the "
          "next op on it must be %s",
          DescribeOp(op), RangeText(c.activations()), path.next_block - 1, DescribeOp(*path.last),
          path.next_block == layers
              ? std::string("its HEAD_LOSS")
              : absl::StrFormat("the BLOCK_FORWARD of block %d", path.next_block));
    }
    path.next_block += c.kind() == BLOCK_FORWARD;
    path.last = &op;
  }
  return absl::OkStatus();
}

// `gradients`: the PROJECTED_GRADIENT ops of `device`, in op order;
// `layout`: where the device's losses are.
absl::Status CheckLosses(const Schedule& s, int device, const LossLayout& layout,
                         const std::vector<const Op*>& gradients) {
  if (gradients.size() > 1) {
    return InvalidArgument(
        "device %d has two PROJECTED_GRADIENT ops, %s and %s; expected one per step", device,
        DescribeOp(*gradients[0]), DescribeOp(*gradients[1]));
  }
  if (gradients.empty()) {
    return InvalidArgument(
        "device %d has no PROJECTED_GRADIENT op; every device computes g each step", device);
  }
  const Op* gradient = gradients[0];
  const BufferRange& read = gradient->compute().losses();
  const std::string& name = s.buffers(layout.buffer).name();
  const int batch = s.training().batch_size();
  for (const std::vector<int64_t>* side : {&layout.plus, &layout.minus}) {
    for (size_t i = 0; i < side->size(); ++i) {
      const int64_t at = (*side)[i] * kLossBytes;
      if (read.buffer() != name || at < read.offset_bytes() ||
          at + kLossBytes > read.offset_bytes() + read.size_bytes()) {
        return OpError(*gradient, "compute.losses", RangeText(read),
                       "a range of '%s' covering the %s loss of example %d%s at byte %d", name,
                       side == &layout.plus ? "+" : "-", i % batch,
                       i >= static_cast<size_t>(batch)
                           ? absl::StrFormat(" along direction %d", i / batch)
                           : std::string(),
                       at);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateZoDataflow(const Schedule& schedule) {
  RETURN_IF_ERROR(CheckStreamsAndUpdates(schedule));
  ASSIGN_OR_RETURN(const std::vector<LossLayout> layouts, AllLossLayouts(schedule));
  std::vector<std::vector<const Op*>> gradients(schedule.devices_size());  // in op order
  for (const Op& op : schedule.ops()) {
    if (op.has_compute() && op.compute().kind() == PROJECTED_GRADIENT) {
      gradients[op.device()].push_back(&op);
    }
  }
  const std::vector<absl::StatusOr<DeviceParamHomes>> homes = AllParamHomes(schedule);
  for (int d = 0; d < schedule.devices_size(); ++d) {
    RETURN_IF_ERROR(CheckLosses(schedule, d, layouts[d], gradients[d]));
    RETURN_IF_ERROR(homes[d].status());
  }
  return absl::OkStatus();
}

}  // namespace zosched
