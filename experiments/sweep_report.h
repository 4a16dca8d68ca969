// What //experiments:explore writes: every configuration as CSV, the best
// as a markdown table, Pareto fronts and heat maps as PNGs (gnuplot).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "experiments/sweep_evaluation.h"
#include "experiments/sweep_space.h"

namespace zosched {

// The objective's value in its own unit (step ms, tokens/s, tokens per
// dollar, GiB of headroom) of a configuration that fits.
double ObjectiveValue(Objective objective, const ConfigResult& r);
// "step time (ms)", "tokens/s", "tokens per dollar", "memory headroom (GiB)".
std::string ObjectiveName(Objective objective);

// configurations.csv: a header, then one row per configuration in order:
// SweepKnobColumns(), then state, meets_constraints, step_ms, tokens_per_s,
// dollars_per_hour, tokens_per_dollar, peak_device_gib, headroom_gib,
// host_gib, overlap, exposed_comm_ms, binding, floor_ms (empty where a state
// has no such figure) and, last, the free-text reason. Fields with a comma
// or a quote are quoted (RFC 4180).
std::string ConfigurationsCsv(const SweepSpace& space, const std::vector<ConfigResult>& results);

// best.md: the sweep, its objective and constraints, the counts per state,
// `summary` lines (throughput), the price sources, and a table of `ranked`
// (RankConfigs) with `schedule_files[i]` beside row i.
std::string BestMarkdown(const SweepSpace& space, const std::vector<ConfigResult>& results,
                         const std::vector<int>& ranked,
                         const std::vector<std::string>& schedule_files,
                         const std::vector<std::string>& summary);

// Writes DIR/pareto_gpus.{csv,dat,gp,png} (tokens/s against GPUs used) and,
// when every cluster is priced, DIR/pareto_cost.{csv,dat,gp,png} (against
// dollars per hour), x on a log scale: every configuration that fits and
// meets the constraints as a point, and each model's front (no other
// configuration of the model has as many tokens/s for as little) as a line.
absl::Status WriteParetoFronts(const SweepSpace& space, const std::vector<ConfigResult>& results,
                               const std::string& dir);

// Writes DIR/heatmap_X_by_Y.{dat,gp,png} for each of the sweep's heat maps:
// the best objective value over the configurations with each pair of
// values (numbers in numeric order, other values in order of appearance).
absl::Status WriteHeatMaps(const SweepSpace& space, const std::vector<ConfigResult>& results,
                           const std::string& dir);

}  // namespace zosched
