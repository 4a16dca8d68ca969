// What //experiments:explore writes: every configuration as CSV, the best
// as a markdown table, Pareto fronts and heat maps as PNGs (gnuplot).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "experiments/sweep_evaluation.h"
#include "experiments/sweep_space.h"

namespace zosched {

// The objective's value in its own unit (step ms, tokens/s, tokens per
// dollar, GiB of headroom) of a configuration that fits.
double ObjectiveValue(Objective objective, const ConfigResult& r);
// "step time (ms)", "tokens/s", "tokens per dollar", "memory headroom (GiB)".
std::string ObjectiveName(Objective objective);

// configurations.csv: a header, then one row per configuration in order:
// SweepKnobColumns() (compute_profile last), then state, meets_constraints,
// step_ms (under the compute profile), roofline_step_ms (its floor: every
// compute op at its roofline), tokens_per_s, dollars_per_hour,
// tokens_per_dollar, peak_device_gib, headroom_gib, host_gib, overlap,
// exposed_comm_ms, binding, floor_ms (the pruning bound, StepFloorNs; empty
// where a state has no such figure) and, last, the free-text reason. Fields
// with a comma or a quote are quoted (RFC 4180).
std::string ConfigurationsCsv(const SweepSpace& space, const std::vector<ConfigResult>& results);

// best.md: the sweep, its objective and constraints, the compute profile,
// the counts per state, `summary` lines (throughput), the price sources, and
// a table of `ranked` (RankConfigs: each with its profile, its step and the
// step's roofline floor) with `schedule_files[i]` beside row i; when `ranked` is
// empty, instead of the table, that no configuration fits and meets the
// constraints and the most common reasons why (CommonReasons).
std::string BestMarkdown(const SweepSpace& space, const std::vector<ConfigResult>& results,
                         const std::vector<int>& ranked,
                         const std::vector<std::string>& schedule_files,
                         const std::vector<std::string>& summary);

// Why configurations are not ranked, as markdown list items, most common
// first, at most `top`: each "- COUNT STATE, e.g. MODEL on CLUSTER,
// STRATEGY: REASON" ("- 37 fit but miss the constraints, e.g. opt-1.3b on
// hgx_h100, mezo: misses the constraints: 512 tokens/s below
// min_tokens_per_s 2000"), with the first such configuration as the
// example. Configurations of one state whose reasons differ only in their
// numbers count as one reason. Ranked configurations are left out.
std::vector<std::string> CommonReasons(const SweepSpace& space,
                                       const std::vector<ConfigResult>& results, int top);

// What WritePictures names its charts (files NAME.csv, .dat, .gp, .png).
constexpr char kParetoGpusChart[] = "pareto_gpus";
constexpr char kParetoCostChart[] = "pareto_cost";
std::string HeatMapChart(const std::string& x, const std::string& y);  // "heatmap_X_by_Y"

// The PNGs WritePictures drew, and those it left out, by file name.
struct Pictures {
  std::vector<std::string> drawn;
  // Nothing to draw: no configuration fits and meets the constraints. None
  // of such a chart's files is written.
  std::vector<std::string> skipped;
};

// Writes, with gnuplot, under `dir`:
// - pareto_gpus.{csv,dat,gp,png}: tokens/s against GPUs used, and, when
//   every cluster is priced, pareto_cost.{csv,dat,gp,png}: against dollars
//   per hour; x on a log scale; every configuration that fits and meets the
//   constraints as a point, and each model's front (no other configuration
//   of the model has as many tokens/s for as little) as a line (a model
//   with no such configuration is left out);
// - heatmap_X_by_Y.{dat,gp,png} for each of the sweep's heat maps: the best
//   objective value over the configurations with each pair of values
//   (numbers in numeric order, other values in order of appearance).
// A chart with nothing to draw is skipped (Pictures::skipped).
//
// Errors: WriteFile's; RunGnuplot's (FailedPrecondition without gnuplot,
// Internal when it fails).
absl::StatusOr<Pictures> WritePictures(const SweepSpace& space,
                                       const std::vector<ConfigResult>& results,
                                       const std::string& dir);

}  // namespace zosched
