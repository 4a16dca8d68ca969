// The cluster catalog: the Cluster textprotos under clusters/, compiled into
// the binary, and loading a Cluster by catalog name or from a user's file
// (validated by schedule/cluster_validate.h).
//
// Units are the IR's (schedule/cluster.proto): `_bytes` bytes, `_gbps` GB/s
// (1e9 bytes per second, never Gbit/s), `_s` seconds, `_tflops` 1e12 FLOP/s.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "schedule/cluster.pb.h"

namespace zosched {

// Names of the catalog's clusters (each file's `name`, equal to its file
// stem), sorted, e.g. {"dgx_a100", "gb200_nvl72", ..., "rtx4090_x8"}.
std::vector<std::string> CatalogClusterNames();

// Where the catalog entry `name` came from ("clusters/NAME.pbtxt"), or "" if
// `name` is not in the catalog.
std::string CatalogClusterPath(const std::string& name);

// Returns the validated Cluster for `name_or_path`: a catalog name, else a
// path to a Cluster textproto (a relative path is taken from where the user
// typed the command, see base/user_path.h).
//
// Errors:
// - NotFound "unknown cluster 'X'; known clusters: a, b, ...; or pass the path
//   of a Cluster textproto" when it is neither a catalog name nor an
//   existing path (see TextCatalog::Load);
// - InvalidArgument naming the path when it is a directory, a FIFO, a device,
//   an empty file or one above the size limit (base/files.h);
// - InvalidArgument "FILE:LINE:COLUMN: parser message" for a malformed file;
// - InvalidArgument from ValidateCluster for a well-formed but impossible
//   cluster, naming the file, the element and the field.
absl::StatusOr<Cluster> LoadCluster(const std::string& name_or_path);

}  // namespace zosched
