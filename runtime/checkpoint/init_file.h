// The checkpoint a fresh training run starts from (train --init=PATH): one
// holding every parameter of the model, such as a Hugging Face checkpoint
// (a .safetensors file, a checkpoint directory, or a sharded checkpoint's
// model.safetensors.index.json) or the weights.safetensors of a finished
// run. Not a run checkpoint (run_checkpoint.h): that one holds the weights
// before the update its run's trajectory log still has pending.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "models/model.pb.h"

namespace zosched {

// Checks that the checkpoint at `path` can start a fresh run of `spec`, so
// that a launcher can refuse it before any rank starts: it opens
// (CheckpointFiles::Open: a .safetensors file, a directory holding
// model.safetensors or model.safetensors.index.json, or an index file with
// its shards), it is not a zosched run checkpoint, and it holds every
// parameter of `spec` (ModelParameters in checkpoint_names.h, found by name
// as LoadModelParameters finds them) with the model's shape, an
// F32/F16/BF16 dtype and finite values, and no parameter of another model
// (a bigger model's blocks, another variant's tensors). Reads the
// parameters' bytes once; converts nothing.
//
// Errors, each message beginning "--init: " and naming the file:
//   those of CheckpointFiles::Open (a missing file, a directory without a
//     checkpoint, a device, a file that is not safetensors, a bad index or
//     a missing shard);
//   InvalidArgument for a run checkpoint, saying that --resume continues
//     its run and that the run's weights.safetensors starts from its end;
//   those of CheckModelParameters (the first tensor of the model missing or
//     of a wrong shape or dtype, a tensor of another model, a NaN or Inf
//     value with its tensor, index and value).
absl::Status CheckInitFile(const std::string& path, const ModelSpec& spec);

}  // namespace zosched
