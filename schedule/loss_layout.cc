#include "schedule/loss_layout.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "base/status_format.h"
#include "base/status_macros.h"
#include "schedule/compute_op_model.h"
#include "schedule/training_settings.h"

namespace zosched {
namespace {

// " along direction i" for i > 0; "" for direction 0 (the only one of a
// one-direction step).
std::string DirectionSuffix(int direction) {
  return direction > 0 ? absl::StrFormat(" along direction %d", direction) : "";
}

// What every device's layout is built from, indexed once per schedule.
struct LossIndex {
  explicit LossIndex(const Schedule& schedule)
      : head_losses(schedule.devices_size()), loss_gathers(schedule.devices_size()) {
    for (int b = 0; b < schedule.buffers_size(); ++b) buffer[schedule.buffers(b).name()] = b;
    absl::flat_hash_set<absl::string_view> keys;  // of the loss all-gathers
    for (int i = 0; i < schedule.ops_size(); ++i) {
      const Op& op = schedule.ops(i);
      if (op.has_compute() && op.compute().kind() == HEAD_LOSS) {
        head_losses[op.device()].push_back(i);
      }
      if (op.has_collective() && op.collective().kind() == ALL_GATHER) {
        auto it = buffer.find(op.collective().recv().buffer());
        if (it != buffer.end() && schedule.buffers(it->second).kind() == LOSSES) {
          loss_gathers[op.device()].push_back(i);
          keys.insert(op.collective().key());
        }
      }
    }
    for (const Op& op : schedule.ops()) {
      if (op.has_collective() && keys.contains(op.collective().key())) {
        sends[{op.collective().key(), op.device()}] = &op.collective().send();
      }
    }
  }
  absl::flat_hash_map<absl::string_view, int> buffer;
  std::vector<std::vector<int>> head_losses;   // per device: its HEAD_LOSS ops
  // Per device: its ALL_GATHER ops into a LOSSES buffer.
  std::vector<std::vector<int>> loss_gathers;
  // (collective key, device) -> that device's send range, for the keys of
  // the loss all-gathers.
  absl::flat_hash_map<std::pair<absl::string_view, int>, const BufferRange*> sends;
};

class LayoutBuilder {
 public:
  LayoutBuilder(const Schedule& schedule, const LossIndex& index, int device)
      : schedule_(schedule), index_(index), device_(device) {
    const int64_t losses =
        static_cast<int64_t>(schedule.training().batch_size()) * DirectionsOf(schedule.training());
    layout_.plus.assign(losses, -1);
    layout_.minus.assign(losses, -1);
  }

  // Places the losses of HEAD_LOSS op `op_index`, whose range lands at
  // element `at` of this device's buffer `buffer`.
  absl::Status Place(int op_index, const std::string& buffer, int64_t at, const char* how) {
    const Op& op = schedule_.ops(op_index);
    const ComputeOp& c = op.compute();
    const int batch = schedule_.training().batch_size();
    const int directions = DirectionsOf(schedule_.training());
    RETURN_IF_ERROR(UseBuffer(buffer, op_index));
    if (c.direction() < 0 || c.direction() >= directions) {
      return InvalidArgument("op %d '%s': direction %d lies outside the step's %d (0 to %d)",
                             op.id(), op.name(), c.direction(), directions, directions - 1);
    }
    for (int k = 0; k < c.examples(); ++k) {
      const int64_t example = static_cast<int64_t>(c.first_example()) + k;
      if (example < 0 || example >= batch) {
        return InvalidArgument("op %d '%s': example %d lies outside the batch of %d", op.id(), op.name(),
                       example, batch);
      }
      std::vector<int64_t>& slot = c.sign() == MINUS ? layout_.minus : layout_.plus;
      const int64_t index = static_cast<int64_t>(c.direction()) * batch + example;
      if (slot[index] >= 0) {
        return InvalidArgument(
            "device %d receives the %s loss of example %d%s twice (again %s op %d '%s'); each "
            "(example, sign, direction) loss is computed by exactly one HEAD_LOSS op",
            device_, c.sign() == MINUS ? "-" : "+", example, DirectionSuffix(c.direction()), how,
            op.id(), op.name());
      }
      slot[index] = at + k;
    }
    return absl::OkStatus();
  }

  absl::StatusOr<LossLayout> Build() {
    for (int i : index_.head_losses[device_]) {
      const BufferRange& losses = schedule_.ops(i).compute().losses();
      RETURN_IF_ERROR(Place(i, losses.buffer(), losses.offset_bytes() / kLossBytes, "from its own"));
    }
    for (int g : index_.loss_gathers[device_]) {
      const CollectiveOp& c = schedule_.ops(g).collective();
      for (int r = 0; r < c.participants_size(); ++r) {
        const int peer = c.participants(r);
        if (peer == device_) continue;
        auto sent_it = index_.sends.find({c.key(), peer});
        if (sent_it == index_.sends.end()) continue;
        const BufferRange& sent = *sent_it->second;
        for (int i : index_.head_losses[peer]) {
          const BufferRange& losses = schedule_.ops(i).compute().losses();
          if (losses.buffer() != sent.buffer() || losses.offset_bytes() < sent.offset_bytes() ||
              losses.offset_bytes() >= sent.offset_bytes() + sent.size_bytes()) {
            continue;
          }
          const int64_t at =
              (c.recv().offset_bytes() + r * c.send().size_bytes() + losses.offset_bytes() -
               sent.offset_bytes()) /
              kLossBytes;
          RETURN_IF_ERROR(Place(i, c.recv().buffer(), at, "through the all-gather from"));
        }
      }
    }
    const int batch = schedule_.training().batch_size();
    for (int64_t i = 0; i < static_cast<int64_t>(layout_.plus.size()); ++i) {
      if (layout_.plus[i] < 0 || layout_.minus[i] < 0) {
        return InvalidArgument(
            "device %d never receives the %s loss of example %d%s: no HEAD_LOSS op of the "
            "device computes it and no loss all-gather brings it (the projected gradient needs "
            "every example's L+ and L- of every direction)",
            device_, layout_.plus[i] < 0 ? "+" : "-", i % batch,
            DirectionSuffix(static_cast<int>(i / batch)));
      }
    }
    return layout_;
  }

 private:
  absl::Status UseBuffer(const std::string& name, int op_index) {
    const int b = index_.buffer.at(name);
    if (layout_.buffer < 0) layout_.buffer = b;
    if (layout_.buffer == b) return absl::OkStatus();
    return InvalidArgument("device %d: the losses of op %d land in buffer '%s' but others in '%s' "
                   "(one LOSSES buffer per device)",
                   device_, schedule_.ops(op_index).id(), name,
                   schedule_.buffers(layout_.buffer).name());
  }

  const Schedule& schedule_;
  const LossIndex& index_;
  const int device_;
  LossLayout layout_;
};

}  // namespace

absl::StatusOr<LossLayout> DeviceLossLayout(const Schedule& schedule, int device) {
  return LayoutBuilder(schedule, LossIndex(schedule), device).Build();
}

absl::StatusOr<std::vector<LossLayout>> AllLossLayouts(const Schedule& schedule) {
  const LossIndex index(schedule);
  std::vector<LossLayout> layouts;
  for (int d = 0; d < schedule.devices_size(); ++d) {
    ASSIGN_OR_RETURN(LossLayout layout, LayoutBuilder(schedule, index, d).Build());
    layouts.push_back(std::move(layout));
  }
  return layouts;
}

}  // namespace zosched
