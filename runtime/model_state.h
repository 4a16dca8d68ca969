// Where a model's parameters live under a Schedule, on one rank: the
// embedding and head parts in the device's resident buffer (compute dtype),
// the decoder blocks in the host parameter store (host dtype) or, for MeZO,
// resident on the device. Initialising them, reading them back as fp32 with
// the pending update applied (for evaluation, checksums and export), and
// saving and loading them exactly as stored (for resume).
#pragma once

#include <cstdint>
#include <functional>
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
  // Not trained: a base part under LoRA, which no update touches (the
  // pending update does not apply to it).
  bool frozen = false;
  int64_t elements() const;
};

// The parts of `schedule`'s model as device `device` sees them through
// `backend`, at their homes (schedule/param_homes.h): the embedding, the
// blocks, the head and, under LoRA, every block's adapters ("adapters 3")
// after them, the base parts then frozen. Errors: those of
// FindParamHomes; Internal when a home is not mapped on this rank.
absl::StatusOr<std::vector<StoredPart>> StoredParts(const Schedule& schedule, int device,
                                                    const Backend& backend);

// Fills `out` (elements() floats) with a part's initial values from `seed`:
// OPT's initialisation, N(0, 0.02²) for matrices and embeddings (z from
// runtime/zo/normal.h with the init seed, so it is reproducible anywhere),
// 1 for norm weights, 0 for biases and norm biases; LoRA's A ~ N(0,
// 1/(3·in)) (the variance of PEFT's kaiming-uniform U(-1/√in, 1/√in)) and
// B = 0, so an adapted model starts as its base.
void InitPart(const StoredPart& part, uint64_t seed, float* out);

// Writes fp32 `values` into the part's storage (converting to its dtype).
void StorePart(const StoredPart& part, const float* values);

// Gives every part of `parts` its initial values: fill(part, values) writes
// part.elements() fp32 values (InitPart, or a checkpoint's), which are then
// stored (StorePart). Parts are independent, so they fill on several cores
// at once (an OPT-30B store is 60 GB to draw and convert; as many threads as
// cores, parts, and parts' fp32 copies in an eighth of the machine's
// memory), and fill must be safe to call from several threads for
// different parts. Errors: the
// first of fill's, in part order (its part is then left unstored).
using PartFill = std::function<absl::Status(const StoredPart& part, float* values)>;
absl::Status FillParts(const std::vector<const StoredPart*>& parts, const PartFill& fill);

// Every part of `parts` with InitPart's values from `seed`: the weights a
// run from random initialisation starts from, which timing runs use too
// (some kernels take longer on other values: fp16 subnormals, say).
absl::Status InitialiseParts(const std::vector<StoredPart>& parts, uint64_t seed);

// The seed calibration's timing runs initialise their parameters from
// (train's default --init_seed).
constexpr uint64_t kTimingInitSeed = 1;

// The part's current values in fp32 with `pending` applied (one entry per
// direction of the step, runtime/zo/zo_state.h; when its learning rate is
// not 0), i.e. the parameters the next step would start from. Does not
// modify the storage.
std::vector<float> CurrentPart(const StoredPart& part, const ModelSpec& spec,
                               const std::vector<ZoState>& pending, float weight_decay);

// FNV-1a 64 over the fp32 bytes of CurrentPart of every part in order,
// as 16 hex digits: the same for every strategy that computed the same
// weights.
std::string ParametersChecksum(const std::vector<StoredPart>& parts, const ModelSpec& spec,
                               const std::vector<ZoState>& pending, float weight_decay);

}  // namespace zosched
