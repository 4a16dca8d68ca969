// The pending update a ZO_STATE buffer holds: one entry per perturbation
// direction of the step (schedule/compute_op_model.h kZoStateBytes, 16
// bytes each; q entries, TrainingSettings.directions): the direction's seed
// (zo_math.h DirectionSeed), its projected gradient g and the step's
// learning rate η; learning_rate 0 means nothing is pending (before the
// first step). Plain data, shared by the CPU backend and CUDA kernels (which
// read it from device memory: the pending g never leaves the device).
#pragma once

#include <cstdint>

namespace zosched {

struct ZoState {
  uint64_t seed = 0;
  float g = 0;
  float learning_rate = 0;
};
static_assert(sizeof(ZoState) == 16, "ZoState is the IR's 16-byte ZO_STATE entry layout");

}  // namespace zosched
