// The model zoo: the ModelSpec textprotos under models/zoo/, compiled into
// the binary, and loading a spec by zoo name or from a user's file.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/model.pb.h"

namespace zosched {

// Names of the zoo's models (each file's `name`, equal to its file stem),
// sorted, e.g. {"gpt2-large", ..., "opt-1.3b", ...}.
std::vector<std::string> ZooModelNames();

// Where the zoo entry `name` came from ("models/zoo/NAME.pbtxt"), or "" if
// `name` is not in the zoo.
std::string ZooModelPath(const std::string& name);

// Returns the validated ModelSpec for `name_or_path`: a zoo name, else a path
// to a ModelSpec textproto (a relative path is taken from where the user
// typed the command, see base/user_path.h).
//
// Errors:
// - NotFound "unknown model 'X'; known models: a, b, ...; or pass the path of
//   a ModelSpec textproto" when it is neither a zoo name nor an existing
//   path (see TextCatalog::Load);
// - InvalidArgument naming the path when it is a directory, a FIFO, a device,
//   an empty file or one above the size limit (base/files.h);
// - InvalidArgument "FILE:LINE:COLUMN: parser message" for a malformed file;
// - InvalidArgument from ValidateModelSpec for a well-formed but impossible
//   spec, naming the file and the field.
absl::StatusOr<ModelSpec> LoadModelSpec(const std::string& name_or_path);

}  // namespace zosched
