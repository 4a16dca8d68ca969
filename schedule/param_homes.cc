#include "schedule/param_homes.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "models/adapters.h"
#include "schedule/describe_op.h"

namespace zosched {
namespace {

// Per device: the names of the buffers its H2D copies read.
using UploadSources = std::vector<absl::flat_hash_set<absl::string_view>>;

// The upload sources of every device (of `device` alone when it is >= 0).
UploadSources FindUploadSources(const Schedule& schedule, int device) {
  UploadSources sources(schedule.devices_size());
  for (const Op& op : schedule.ops()) {
    if ((device >= 0 && op.device() != device) || op.device() < 0 ||
        op.device() >= schedule.devices_size() || !op.has_copy() ||
        op.copy().direction() != HOST_TO_DEVICE) {
      continue;
    }
    sources[op.device()].insert(op.copy().src().buffer());
  }
  return sources;
}

// FindParamHomes, given the names of the buffers `device` uploads from.
absl::StatusOr<DeviceParamHomes> HomesOf(const Schedule& schedule, int device,
                                         const absl::flat_hash_set<absl::string_view>& sources) {
  const int layers = schedule.model().num_layers();
  const bool lora = TrainsAdapters(schedule.training().peft());
  // The host stores this device uploads from (by name; names are unique).
  absl::flat_hash_set<int> stores;
  for (int b = 0; b < schedule.buffers_size() && !sources.empty(); ++b) {
    if (sources.contains(schedule.buffers(b).name())) stores.insert(b);
  }
  DeviceParamHomes homes;
  homes.blocks.resize(layers);
  if (lora) homes.adapters.resize(layers);
  auto place = [&](ParamHome* home, Part part, int block, int b,
                   const ParamPlacement& p) -> absl::Status {
    if (home->buffer >= 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "device %d: %s has two homes, buffers '%s' and '%s' (each part lives in one buffer "
          "a device reads it from)",
          device, DescribePart(part, block), schedule.buffers(home->buffer).name(),
          schedule.buffers(b).name()));
    }
    home->buffer = b;
    home->offset_bytes = p.offset_bytes();
    home->dtype = schedule.buffers(b).dtype();
    home->host = schedule.buffers(b).device() < 0;
    return absl::OkStatus();
  };
  for (int b = 0; b < schedule.buffers_size(); ++b) {
    const Buffer& buffer = schedule.buffers(b);
    const bool mine = (buffer.kind() == RESIDENT_PARAMS && buffer.device() == device) ||
                      (buffer.kind() == HOST_PARAMS && stores.contains(b));
    if (!mine) continue;
    for (const ParamPlacement& p : buffer.params()) {
      ParamHome* home = nullptr;
      if (p.part() == EMBEDDING_PART) home = &homes.embedding;
      if (p.part() == HEAD_PART) home = &homes.head;
      if (p.part() == DECODER_BLOCK && p.block() >= 0 && p.block() < layers) {
        home = &homes.blocks[p.block()];
      }
      if (p.part() == ADAPTER_PART && lora && p.block() >= 0 && p.block() < layers) {
        home = &homes.adapters[p.block()];
      }
      if (home == nullptr) continue;  // validation reports a bad placement
      RETURN_IF_ERROR(place(home, p.part(), p.block(), b, p));
    }
  }
  auto missing = [&](const ParamHome& home, Part part, int block) -> absl::Status {
    if (home.buffer >= 0) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrFormat(
        "device %d: %s has no home: no RESIDENT_PARAMS buffer of the device and no HOST_PARAMS "
        "store it uploads from has a placement for it",
        device, DescribePart(part, block)));
  };
  RETURN_IF_ERROR(missing(homes.embedding, EMBEDDING_PART, 0));
  for (int k = 0; k < layers; ++k) {
    RETURN_IF_ERROR(missing(homes.blocks[k], DECODER_BLOCK, k));
  }
  RETURN_IF_ERROR(missing(homes.head, HEAD_PART, 0));
  for (int k = 0; k < static_cast<int>(homes.adapters.size()); ++k) {
    RETURN_IF_ERROR(missing(homes.adapters[k], ADAPTER_PART, k));
  }
  return homes;
}

}  // namespace

absl::StatusOr<DeviceParamHomes> FindParamHomes(const Schedule& schedule, int device) {
  if (device < 0 || device >= schedule.devices_size()) return HomesOf(schedule, device, {});
  return HomesOf(schedule, device, FindUploadSources(schedule, device)[device]);
}

std::vector<absl::StatusOr<DeviceParamHomes>> AllParamHomes(const Schedule& schedule) {
  const UploadSources sources = FindUploadSources(schedule, -1);
  std::vector<absl::StatusOr<DeviceParamHomes>> homes;
  homes.reserve(schedule.devices_size());
  for (int d = 0; d < schedule.devices_size(); ++d) {
    homes.push_back(HomesOf(schedule, d, sources[d]));
  }
  return homes;
}

}  // namespace zosched
