// Where a model's parameters live under a Schedule, on one rank: the
// embedding and head parts in the device's resident buffer (compute dtype),
// the decoder blocks in the host parameter store (host dtype) or, for MeZO,
// resident on the device. Initialising them, reading them back as fp32 with
// the pending update applied (for evaluation, checksums and export), and
// saving and loading them exactly as stored (for resume).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/model.pb.h"
#include "models/model_tensors.h"
#include "runtime/backend.h"
#include "runtime/zo_ranges.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// One part of the model as stored on this rank.
struct StoredPart {
  std::string name;                 // "embedding", "block 3", "head"
  std::vector<TensorSpec> tensors;  // checkpoint tensors, in storage order
  uint32_t stream = 0;              // its z stream (runtime/zo/zo_math.h)
  char* data = nullptr;             // the stored values
  DType dtype = DTYPE_UNSPECIFIED;
  int buffer = -1;                  // the schedule buffer holding them (index)
  bool host = false;                // in node-shared host memory
  int64_t elements() const;
};

// The parts of `schedule`'s model as device `device` sees them through
// `backend`, at their homes (schedule/param_homes.h). Errors: those of
// FindParamHomes; Internal when a home is not mapped on this rank.
absl::StatusOr<std::vector<StoredPart>> StoredParts(const Schedule& schedule, int device,
                                                    const Backend& backend);

// Fills `out` (elements() floats) with a part's initial values from `seed`:
// OPT's initialisation, N(0, 0.02²) for matrices and embeddings (z from
// runtime/zo/normal.h with the init seed, so it is reproducible anywhere),
// 1 for norm weights, 0 for biases and norm biases.
void InitPart(const StoredPart& part, uint64_t seed, float* out);

// Writes fp32 `values` into the part's storage (converting to its dtype).
void StorePart(const StoredPart& part, const float* values);

// The part's current values in fp32 with `pending` applied (when its
// learning rate is not 0), i.e. the parameters the next step would start
// from. Does not modify the storage.
std::vector<float> CurrentPart(const StoredPart& part, const ModelSpec& spec,
                               const ZoState& pending, float weight_decay);

// FNV-1a 64 over the fp32 bytes of CurrentPart of every part in order,
// as 16 hex digits: the same for every strategy that computed the same
// weights.
std::string ParametersChecksum(const std::vector<StoredPart>& parts, const ModelSpec& spec,
                               const ZoState& pending, float weight_decay);

}  // namespace zosched
