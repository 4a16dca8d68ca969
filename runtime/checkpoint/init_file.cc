#include "runtime/checkpoint/init_file.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "models/model_tensors.h"
#include "runtime/checkpoint/run_checkpoint.h"
#include "runtime/checkpoint/safetensors.h"

namespace zosched {
namespace {

// Every parameter tensor of `spec`.
std::vector<TensorSpec> ModelTensors(const ModelSpec& spec) {
  std::vector<TensorSpec> all = EmbeddingTensors(spec);
  for (int64_t l = 0; l < spec.num_layers(); ++l) {
    for (TensorSpec& t : BlockTensors(spec, l)) all.push_back(std::move(t));
  }
  for (TensorSpec& t : FinalNormTensors(spec)) all.push_back(std::move(t));
  for (TensorSpec& t : HeadTensors(spec)) all.push_back(std::move(t));
  return all;
}

absl::Status Check(const std::string& path, const ModelSpec& spec) {
  ASSIGN_OR_RETURN(const SafetensorsFile file, ReadSafetensors(path));
  if (IsRunCheckpoint(file)) {
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is a run checkpoint: it holds the weights before its run's last logged update, "
        "which is still pending in that run's trajectory.log, so a run started from it would "
        "drop that update. To continue that run, pass --resume --out_dir=%s (without --init); "
        "to start from the weights it finished with, pass --init=%s/weights.safetensors",
        path, dir, dir));
  }
  return CheckModelParameters(file, spec, ModelTensors(spec));
}

}  // namespace

absl::Status CheckInitFile(const std::string& path, const ModelSpec& spec) {
  const absl::Status status = Check(path, spec);
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat("--init: ", status.message()));
}

}  // namespace zosched
