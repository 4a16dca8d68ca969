#include "schedule/validate_streams_and_buffers.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_format.h"
#include "base/status_macros.h"
#include "models/accounting.h"
#include "models/model_spec.h"
#include "schedule/model_parts.h"

namespace zosched {
namespace {

// Checks the ParamPlacements of `buffer` as ValidateBuffers says. `counts`
// = CountModel of the schedule's model, which has `layers` layers.
absl::Status CheckPlacements(const Buffer& buffer, const OpFamily& family,
                             const ModelCounts& counts, int layers) {
  if (buffer.params_size() == 0) return absl::OkStatus();
  if (buffer.kind() != HOST_PARAMS && buffer.kind() != RESIDENT_PARAMS) {
    return InvalidArgument(
        "buffer '%s' (%s) has parameter placements; only HOST_PARAMS and "
        "RESIDENT_PARAMS buffers hold parameters from step to step",
        buffer.name(), BufferKind_Name(buffer.kind()));
  }
  const int64_t bytes = DTypeBytes(buffer.dtype());
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (int i = 0; i < buffer.params_size(); ++i) {
    const ParamPlacement& p = buffer.params(i);
    const std::string where = absl::StrFormat("buffer '%s' params[%d]", buffer.name(), i);
    if (p.part() == PART_UNSPECIFIED) return InvalidArgument("%s: part is not set", where);
    const bool per_block = p.part() == DECODER_BLOCK || p.part() == ADAPTER_PART;
    const int block_limit = per_block ? layers : 1;
    if (p.block() < 0 || p.block() >= block_limit) {
      return InvalidArgument(
          "%s: block is %d; expected %s", where, p.block(),
          per_block
              ? absl::StrFormat("0 to %d (the model has %d layers)", layers - 1, layers)
              : std::string("0 for the ") + Part_Name(p.part()));
    }
    const int64_t part = PartElements(counts, p.part());
    if (part == 0) {
      return InvalidArgument("%s: part is %s; expected a part the schedule trains (ADAPTER_PART "
                             "only under training.peft LORA or PREFIX)",
                             where, Part_Name(p.part()));
    }
    const bool fits = family.shards_placements ? p.first_element() >= 0 && p.elements() >= 1 &&
                                                     p.first_element() <= part - p.elements()
                                               : p.first_element() == 0 && p.elements() == part;
    if (!fits) {
      return InvalidArgument(
          "%s: holds elements [%d, +%d) of %s; expected %s [0, +%d)", where, p.first_element(),
          p.elements(), Part_Name(p.part()),
          family.shards_placements ? "a non-empty range inside" : "the whole part,", part);
    }
    const int64_t elements = p.elements();
    if (p.offset_bytes() < 0 || p.offset_bytes() % bytes != 0 ||
        p.offset_bytes() > buffer.size_bytes() ||
        elements * bytes > buffer.size_bytes() - p.offset_bytes()) {
      return InvalidArgument(
          "%s: %d bytes at offset %d do not fit the buffer's %d bytes (or the offset "
          "is not a multiple of the %s element)",
          where, elements * bytes, p.offset_bytes(), buffer.size_bytes(),
          DType_Name(buffer.dtype()));
    }
    spans.emplace_back(p.offset_bytes(), p.offset_bytes() + elements * bytes);
  }
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i) {
    if (spans[i].first < spans[i - 1].second) {
      return InvalidArgument("buffer '%s': parameter placements overlap at bytes [%d, %d)",
                             buffer.name(), spans[i].first,
                             std::min(spans[i].second, spans[i - 1].second));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateStreams(const Schedule& s) {
  for (const ScheduleDevice& d : s.devices()) {
    int compute = 0;
    for (const Stream& stream : d.streams()) compute += stream.kind() == COMPUTE;
    if (compute != 1) {
      return InvalidArgument(
          "device %d has %d COMPUTE streams; expected exactly one (compute ops of a "
          "device run in one order)",
          d.id(), compute);
    }
  }
  for (const Op& op : s.ops()) {
    StreamKind wanted = STREAM_KIND_UNSPECIFIED;
    if (op.has_compute()) wanted = COMPUTE;
    if (op.has_collective()) wanted = COLLECTIVE;
    if (op.has_copy()) {
      switch (op.copy().direction()) {
        case HOST_TO_DEVICE:
          wanted = H2D;
          break;
        case DEVICE_TO_HOST:
          wanted = D2H;
          break;
        case DEVICE_TO_DEVICE:
          wanted = PEER;
          break;
        default:
          return OpError(op, "copy.direction", CopyDirection_Name(op.copy().direction()),
                         "HOST_TO_DEVICE, DEVICE_TO_HOST or DEVICE_TO_DEVICE");
      }
    }
    // The structure checks found the stream, named once on its device.
    StreamKind found = STREAM_KIND_UNSPECIFIED;
    for (const Stream& stream : s.devices(op.device()).streams()) {
      if (stream.name() == op.stream()) found = stream.kind();
    }
    if (wanted != STREAM_KIND_UNSPECIFIED && found != wanted) {
      return OpError(op, absl::StrCat("the kind of stream '", op.stream(), "'"),
                     StreamKind_Name(found), "%s for this op", StreamKind_Name(wanted));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateBuffers(const Schedule& s, const OpFamily& family) {
  // The strategy decides which kinds of buffers make sense at all.
  for (const Buffer& b : s.buffers()) {
    if (family.foreign_buffer_kind(b.kind())) {
      return InvalidArgument(
          "buffer '%s' is a %s buffer, which %s schedules do not have (strategy %s)", b.name(),
          BufferKind_Name(b.kind()), family.name, StrategyKind_Name(s.strategy().kind()));
    }
  }
  const ModelCounts counts = CountModel(s.model(), s.training().peft());
  std::vector<int> zo_states(s.devices_size(), 0);
  for (const Buffer& b : s.buffers()) {
    // Proto3 enums are open: a file may hold any number.
    if (b.kind() == BUFFER_KIND_UNSPECIFIED || b.dtype() == DTYPE_UNSPECIFIED ||
        !BufferKind_IsValid(b.kind()) || !DType_IsValid(b.dtype())) {
      return InvalidArgument("buffer '%s': kind %s (%d), dtype %s (%d); both must be set", b.name(),
                             BufferKind_Name(b.kind()), b.kind(), DType_Name(b.dtype()), b.dtype());
    }
    const bool host = b.device() < 0;
    if (host != (b.kind() == HOST_PARAMS)) {
      return InvalidArgument(
          "buffer '%s' is a %s buffer in %s; HOST_PARAMS buffers live in host memory "
          "(device -1) and every other kind on a device",
          b.name(), BufferKind_Name(b.kind()), host ? "host memory" : "a device");
    }
    const bool carries = b.kind() == HOST_PARAMS || b.kind() == RESIDENT_PARAMS ||
                         b.kind() == ZO_STATE || b.kind() == OPTIMIZER_STATE ||
                         b.kind() == MASTER_WEIGHTS;
    if (carries && !b.persistent()) {
      return InvalidArgument(
          "buffer '%s' (%s) is not persistent; its contents carry over from step to "
          "step, so it must be",
          b.name(), BufferKind_Name(b.kind()));
    }
    if (b.kind() == ZO_STATE) ++zo_states[b.device()];
    RETURN_IF_ERROR(CheckPlacements(b, family, counts, s.model().num_layers()));
  }
  for (int d = 0; d < s.devices_size() && family.one_zo_state_per_device; ++d) {
    if (zo_states[d] != 1) {
      return InvalidArgument(
          "device %d has %d ZO_STATE buffers; expected exactly one (its pending "
          "update)",
          d, zo_states[d]);
    }
  }
  return absl::OkStatus();
}

}  // namespace zosched
