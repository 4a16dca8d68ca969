#include "runtime/checkpoint/init_file.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "runtime/checkpoint/checkpoint_files.h"
#include "runtime/checkpoint/checkpoint_names.h"
#include "runtime/checkpoint/run_checkpoint.h"
#include "runtime/checkpoint/safetensors.h"

namespace zosched {
namespace {

absl::Status Check(const std::string& path, const ModelSpec& spec) {
  ASSIGN_OR_RETURN(const CheckpointFiles checkpoint, CheckpointFiles::Open(path));
  for (const SafetensorsFile& file : checkpoint.files()) {
    if (!IsRunCheckpoint(file)) continue;
    const size_t slash = file.path().rfind('/');
    const std::string dir = slash == std::string::npos ? "." : file.path().substr(0, slash);
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is a run checkpoint: it holds the weights before its run's last logged update, "
        "which is still pending in that run's trajectory.log, so a run started from it would "
        "drop that update. To continue that run, pass --resume --out_dir=%s (without --init); "
        "to start from the weights it finished with, pass --init=%s/weights.safetensors",
        file.path(), dir, dir));
  }
  return CheckModelParameters(checkpoint, spec, ModelParameters(spec));
}

}  // namespace

absl::Status CheckInitFile(const std::string& path, const ModelSpec& spec) {
  const absl::Status status = Check(path, spec);
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat("--init: ", status.message()));
}

}  // namespace zosched
