// The file a fresh training run starts from (train --init=FILE): a
// safetensors file holding every parameter of the model, such as a Hugging
// Face checkpoint or the weights.safetensors of a finished run. Not a run
// checkpoint (run_checkpoint.h): that one holds the weights before the
// update its run's trajectory log still has pending.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "models/model.pb.h"

namespace zosched {

// Checks that the file at `path` can start a fresh run of `spec`, so that a
// launcher can refuse it before any rank starts: it opens as safetensors,
// it is not a zosched run checkpoint, and it holds every parameter of `spec`
// (models/model_tensors.h, found by name as LoadModelParameters finds them)
// with the model's shape, an F32/F16/BF16 dtype and finite values. Reads
// the parameters' bytes once; converts nothing.
//
// Errors, each message beginning "--init: " and naming the file:
//   those of ReadSafetensors (a missing file, a directory, a device, a file
//     that is not safetensors);
//   InvalidArgument for a run checkpoint, saying that --resume continues
//     its run and that the run's weights.safetensors starts from its end;
//   those of CheckModelParameters (a tensor missing, a wrong shape or
//     dtype, a NaN or Inf value with its tensor, index and value).
absl::Status CheckInitFile(const std::string& path, const ModelSpec& spec);

}  // namespace zosched
