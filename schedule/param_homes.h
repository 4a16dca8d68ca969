// Where each device's parameters live between steps: the buffers whose
// ParamPlacements hold them (schedule.proto). The embedding and head parts
// live in a RESIDENT_PARAMS buffer of the device; each decoder block either
// there too (MEZO) or in the HOST_PARAMS store the device uploads it from
// (its H2D copies' source); under LoRA each block's adapters in a
// RESIDENT_PARAMS buffer of the device. Backends read the parameters' home from here,
// never from buffer names; ValidateSchedule checks that every device's homes
// resolve.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// One part's home: the part is stored contiguously from `offset_bytes` of
// buffer `buffer` (an index into Schedule.buffers) in that buffer's dtype.
struct ParamHome {
  int buffer = -1;
  int64_t offset_bytes = 0;
  DType dtype = DTYPE_UNSPECIFIED;
  bool host = false;  // a host store (shared by the host's devices that use it)
};

struct DeviceParamHomes {
  ParamHome embedding;
  std::vector<ParamHome> blocks;  // one per decoder block
  ParamHome head;
  // Under LoRA, one per decoder block (its ADAPTER_PART, resident on the
  // device); empty otherwise.
  std::vector<ParamHome> adapters;
};

// The homes of device `device`'s parameters. Every placement must hold a
// whole part (first_element 0, elements = the part's size).
//
// Errors: InvalidArgument naming the device and the part when a part has no
// home, or more than one (two resident placements, or blocks uploaded from
// two different host stores).
absl::StatusOr<DeviceParamHomes> FindParamHomes(const Schedule& schedule, int device);

// FindParamHomes of every device, in device order, from one pass over the
// ops (validation asks for all of them).
std::vector<absl::StatusOr<DeviceParamHomes>> AllParamHomes(const Schedule& schedule);

}  // namespace zosched
