// The files //experiments:explore writes under its output directory, named
// in one place, and making room there for a new run so that it never mixes
// with an earlier run's files.
//
// A run writes, under the directory:
//   configurations.csv, best.md
//   best/NN_SLUG.pb       the ranked configurations' schedules, NN from 01
//   clusters/SLUG.pbtxt   every cluster the sweep built
//   pareto_gpus.*, pareto_cost.*, heatmap_X_by_Y.*  (.csv, .dat, .gp, .png;
//                         gnuplot's .gp.log while it runs), see
//                         experiments/sweep_report.h
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace zosched {

constexpr char kConfigurationsCsv[] = "configurations.csv";
constexpr char kBestMarkdown[] = "best.md";
constexpr char kBestDir[] = "best";
constexpr char kClustersDir[] = "clusters";

// "best/07_opt-1.3b_hgx_h100_zo2_3_slots.pb": the schedule of rank `rank`
// (from 1), `label` made safe for a file name (Slug).
std::string BestScheduleFile(int rank, const std::string& label);

// "clusters/hgx_h100_host_link_gbps_16.pbtxt": the cluster `label`.
std::string ClusterFile(const std::string& label);

// Whether `relative_path` ('/'-separated, under an output directory) names a
// file a run writes, whatever its sweep: one of those above.
bool IsExploreOutput(const std::string& relative_path);

// Checks, before a run, that `dir` holds nothing it would mix with: OK
// when `dir` is absent or empty, or when `overwrite` (the run then replaces
// the explorer's files there, RemoveExploreOutputs).
//
// Errors: InvalidArgument "DIR is not empty (an earlier run's outputs?):
// --overwrite replaces the explorer's files there, or choose another
// --out_dir"; DirectoryHasEntries's (InvalidArgument when `dir` is a file).
absl::Status CheckOutputDirectory(const std::string& dir, bool overwrite);

// Removes every file under `dir` that IsExploreOutput, then best/ and
// clusters/ if that leaves them empty; every other file stays. Returns how
// many files it removed (0 when `dir` does not exist).
//
// Errors: the OS error's code, naming the path it could not read or remove.
absl::StatusOr<int> RemoveExploreOutputs(const std::string& dir);

}  // namespace zosched
