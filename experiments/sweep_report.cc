#include "experiments/sweep_report.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "experiments/gnuplot.h"
#include "schedule/compute_profile_fit.h"

namespace zosched {
namespace {

// Reasons best.md lists when nothing is ranked.
constexpr int kCommonReasons = 5;

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) {
    if (c == '"') quoted += '"';
    quoted += c == '\n' ? ' ' : c;
  }
  return quoted + "\"";
}

// A markdown table cell: pipes would end it.
std::string MdCell(std::string s) {
  std::replace(s.begin(), s.end(), '|', '/');
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

bool Ranked(const ConfigResult& r) { return r.state == ConfigState::kFits && r.meets_constraints; }

bool EveryMemberPriced(const SweepSpace& space) {
  for (const ClusterMember& m : space.members) {
    if (m.price_per_gpu_hour <= 0) return false;
  }
  return true;
}

// How the sweep's steps are predicted, for best.md.
std::string ProfileText(const Sweep& sweep) {
  const std::string profile = absl::AsciiStrToLower(sweep.compute_profile());
  if (profile == "roofline") {
    return "Compute: roofline for every configuration (the sweep's compute_profile): each step "
           "has every compute op at its roofline, so it is its own floor.";
  }
  constexpr char kColumns[] =
      "Step ms: predicted kernel by kernel under the profile named; floor ms: the same schedule "
      "with every compute op at its roofline.";
  if (profile.empty()) {
    return absl::StrCat("Compute: each configuration's kernel-level profile (zosched_cuda for "
                        "ZO; pytorch_first_order for first-order training). ",
                        kColumns);
  }
  return absl::StrCat("Compute: ", profile, " for every configuration (the sweep's "
                      "compute_profile). ", kColumns);
}

std::string ConstraintsText(const Constraints& c) {
  std::vector<std::string> parts;
  if (c.min_tokens_per_s() > 0) parts.push_back(absl::StrFormat(">= %g tokens/s", c.min_tokens_per_s()));
  if (c.max_gpus() > 0) parts.push_back(absl::StrFormat("<= %d GPUs", c.max_gpus()));
  if (c.max_dollars_per_hour() > 0) {
    parts.push_back(absl::StrFormat("<= $%g per hour", c.max_dollars_per_hour()));
  }
  if (c.min_headroom_gib() > 0) {
    parts.push_back(absl::StrFormat(">= %g GiB free on every device", c.min_headroom_gib()));
  }
  return parts.empty() ? "none" : absl::StrJoin(parts, ", ");
}

// One point of a Pareto chart.
struct ParetoPoint {
  double x = 0, tokens_per_s = 0;
  int config = 0;
};

// The points no other point dominates (as many tokens/s for as little x),
// by x.
std::vector<ParetoPoint> Front(std::vector<ParetoPoint> points) {
  std::stable_sort(points.begin(), points.end(), [](const ParetoPoint& a, const ParetoPoint& b) {
    return a.x != b.x ? a.x < b.x : a.tokens_per_s > b.tokens_per_s;
  });
  std::vector<ParetoPoint> front;
  for (const ParetoPoint& p : points) {
    if (front.empty() || p.tokens_per_s > front.back().tokens_per_s) front.push_back(p);
  }
  return front;
}

// Writes DIR/NAME.{csv,dat,gp,png}; false, writing nothing, when no
// configuration fits and meets the constraints (nothing to draw).
absl::StatusOr<bool> WriteParetoChart(const SweepSpace& space,
                                      const std::vector<ConfigResult>& results,
                                      const std::string& dir, const std::string& name,
                                      const std::string& x_label,
                                      double (*x_of)(const SweepConfig&, const ConfigResult&)) {
  std::vector<std::vector<ParetoPoint>> points(space.sweep.models_size());
  bool any = false;
  for (int i = 0; i < static_cast<int>(results.size()); ++i) {
    if (!Ranked(results[i])) continue;
    points[space.configs[i].model].push_back(
        {x_of(space.configs[i], results[i]), results[i].tokens_per_s, i});
    any = true;
  }
  if (!any) return false;
  std::vector<std::string> csv = {absl::StrCat("model,", name, ",tokens_per_s,cluster,strategy")};
  std::vector<std::string> dat;
  std::string plot;
  int block = 0;  // gnuplot's index of the next block in the .dat
  for (int m = 0; m < space.sweep.models_size(); ++m) {
    if (points[m].empty()) continue;  // an empty block would be an error to plot
    dat.push_back(absl::StrCat("# model ", space.sweep.models(m), ": every configuration"));
    for (const ParetoPoint& p : points[m]) {
      dat.push_back(absl::StrFormat("%g %g", p.x, p.tokens_per_s));
    }
    dat.push_back("\n");
    dat.push_back(absl::StrCat("# model ", space.sweep.models(m), ": the front"));
    for (const ParetoPoint& p : Front(points[m])) {
      dat.push_back(absl::StrFormat("%g %g", p.x, p.tokens_per_s));
      const SweepConfig& c = space.configs[p.config];
      csv.push_back(absl::StrJoin({CsvField(space.sweep.models(m)), absl::StrFormat("%g", p.x),
                                   absl::StrFormat("%.3f", p.tokens_per_s),
                                   CsvField(space.members[c.member].label),
                                   CsvField(StrategyLabel(c))},
                                  ","));
    }
    dat.push_back("\n");
    absl::StrAppend(&plot, plot.empty() ? "plot " : ", ", "here . '", name, ".dat' index ", block,
                    " with points pt 7 ps 0.6 lc ", m + 1, " notitle, here . '", name,
                    ".dat' index ", block + 1, " with linespoints lw 2 pt 7 lc ", m + 1,
                    " title ", GnuplotString(space.sweep.models(m) + " front"));
    block += 2;
  }
  const std::string base = dir + "/" + name;
  RETURN_IF_ERROR(WriteFile(base + ".csv", absl::StrJoin(csv, "\n") + "\n"));
  RETURN_IF_ERROR(WriteFile(base + ".dat", absl::StrJoin(dat, "\n") + "\n"));
  const std::string gp = absl::StrFormat(
      "# Redraw with `gnuplot %s.gp` from any directory.\n%s"
      "set terminal pngcairo size 1000,650 font 'sans,10' noenhanced\n"
      "set output here . '%s.png'\nset title %s\nset xlabel %s\n"
      "set ylabel 'tokens/s (predicted)'\nset logscale x 2\nset grid\nset key top left\n%s\n",
      name, kGnuplotHere, name,
      GnuplotString(absl::StrFormat("%s: tokens/s against %s (points: every configuration "
                                    "that fits and meets the constraints)",
                                    space.sweep.name(), x_label)),
      GnuplotString(x_label), plot);
  RETURN_IF_ERROR(WriteFile(base + ".gp", gp));
  RETURN_IF_ERROR(RunGnuplot(base + ".gp", base + ".png"));
  return true;
}

// The distinct values of a column, in numeric order when all are numbers.
std::vector<std::string> AxisValues(const std::vector<std::string>& column) {
  std::vector<std::string> values;
  for (const std::string& v : column) {
    if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
  }
  bool numeric = true;
  for (const std::string& v : values) {
    double unused;
    numeric &= absl::SimpleAtod(v, &unused);
  }
  if (numeric) {
    std::stable_sort(values.begin(), values.end(), [](const std::string& a, const std::string& b) {
      return std::strtod(a.c_str(), nullptr) < std::strtod(b.c_str(), nullptr);
    });
  }
  return values;
}

std::string Tics(const std::vector<std::string>& values) {
  std::vector<std::string> tics;
  for (size_t i = 0; i < values.size(); ++i) {
    tics.push_back(absl::StrCat(GnuplotString(values[i].empty() ? "(n/a)" : values[i]), " ", i));
  }
  return absl::StrCat("(", absl::StrJoin(tics, ", "), ")");
}

// Writes DIR/heatmap_X_by_Y.{dat,gp,png}; false, writing nothing, when no
// configuration fits and meets the constraints (nothing to draw).
absl::StatusOr<bool> WriteHeatMap(const SweepSpace& space,
                                  const std::vector<ConfigResult>& results, const HeatMap& map,
                                  const std::string& dir) {
  const std::vector<std::string>& columns = SweepKnobColumns();
  const int xi = std::find(columns.begin(), columns.end(), map.x()) - columns.begin();
  const int yi = std::find(columns.begin(), columns.end(), map.y()) - columns.begin();
  std::vector<std::string> xs, ys;
  for (const SweepConfig& c : space.configs) {
    const std::vector<std::string> knobs = SweepKnobValues(space, c);
    xs.push_back(knobs[xi]);
    ys.push_back(knobs[yi]);
  }
  const std::vector<std::string> x_values = AxisValues(xs), y_values = AxisValues(ys);
  const Objective objective = space.sweep.objective();
  std::map<std::pair<int, int>, double> best;  // (x, y) -> best score
  for (size_t i = 0; i < results.size(); ++i) {
    if (!Ranked(results[i])) continue;
    const std::pair<int, int> cell = {
        std::find(x_values.begin(), x_values.end(), xs[i]) - x_values.begin(),
        std::find(y_values.begin(), y_values.end(), ys[i]) - y_values.begin()};
    auto it = best.find(cell);
    if (it == best.end() || results[i].score > it->second) best[cell] = results[i].score;
  }
  if (best.empty()) return false;
  const std::string name = HeatMapChart(map.x(), map.y());
  std::vector<std::string> dat = {absl::StrFormat(
      "# %s index, %s index, best %s, its label (NaN, -: nothing fits and meets the "
      "constraints)", map.x(),
      map.y(), ObjectiveName(objective))};
  for (size_t y = 0; y < y_values.size(); ++y) {
    for (size_t x = 0; x < x_values.size(); ++x) {
      auto it = best.find({static_cast<int>(x), static_cast<int>(y)});
      const double value = it == best.end() ? NAN
                                            : (objective == STEP_TIME ? -it->second : it->second);
      dat.push_back(absl::StrFormat("%d %d %g %s", x, y, value,
                                    std::isnan(value) ? "-" : absl::StrFormat("%.3g", value)));
    }
    dat.push_back("");
  }
  const std::string base = dir + "/" + name;
  RETURN_IF_ERROR(WriteFile(base + ".dat", absl::StrJoin(dat, "\n") + "\n"));
  const std::string gp = absl::StrFormat(
      "# Redraw with `gnuplot %s.gp` from any directory.\n%s"
      "set terminal pngcairo size 1100,700 font 'sans,10' noenhanced\n"
      "set output here . '%s.png'\nset title %s\n"
      "set xlabel %s\nset ylabel %s\nset xtics %s rotate by -30\nset ytics %s\n"
      "set xrange [-0.5:%d.5]\nset yrange [-0.5:%d.5]\nset cblabel %s\n"
      "set palette rgbformulae 33,13,10\n"
      "plot here . '%s.dat' using 1:2:3 with image notitle, "
      "'' using 1:2:4 with labels notitle\n",
      name, kGnuplotHere, name,
      GnuplotString(absl::StrFormat("%s: best %s by %s and %s (-: nothing fits and meets the constraints)",
                                    space.sweep.name(), ObjectiveName(objective), map.x(),
                                    map.y())),
      GnuplotString(map.x()), GnuplotString(map.y()), Tics(x_values), Tics(y_values),
      static_cast<int>(x_values.size()) - 1, static_cast<int>(y_values.size()) - 1,
      GnuplotString(ObjectiveName(objective)), name);
  RETURN_IF_ERROR(WriteFile(base + ".gp", gp));
  RETURN_IF_ERROR(RunGnuplot(base + ".gp", base + ".png"));
  return true;
}

// "37 fit but miss the constraints" and the like, for CommonReasons.
std::string StateCount(ConfigState state, int count) {
  const bool one = count == 1;
  switch (state) {
    case ConfigState::kFits:
      return absl::StrFormat("%d %s but %s the constraints", count, one ? "fits" : "fit",
                             one ? "misses" : "miss");
    case ConfigState::kDoesNotFit:
      return absl::StrFormat("%d %s not fit", count, one ? "does" : "do");
    case ConfigState::kInvalid:
      return absl::StrFormat("%d %s invalid", count, one ? "is" : "are");
    case ConfigState::kPruned:
      return absl::StrFormat("%d %s pruned", count, one ? "is" : "are");
    case ConfigState::kFailed:
      break;
  }
  return absl::StrFormat("%d failed", count);
}

// `reason` with each number (a run of digits and points) as '#', so that
// reasons that differ only in their figures compare equal.
std::string WithoutNumbers(const std::string& reason) {
  std::string masked;
  for (char c : reason) {
    const bool numeric = absl::ascii_isdigit(c) || c == '.';
    if (!numeric) {
      masked += c;
    } else if (masked.empty() || masked.back() != '#') {
      masked += '#';
    }
  }
  return masked;
}

}  // namespace

std::string HeatMapChart(const std::string& x, const std::string& y) {
  return absl::StrCat("heatmap_", x, "_by_", y);
}

double ObjectiveValue(Objective objective, const ConfigResult& r) {
  return objective == STEP_TIME ? r.step_ms : r.score;
}

std::string ObjectiveName(Objective objective) {
  switch (objective) {
    case STEP_TIME:
      return "step time (ms)";
    case TOKENS_PER_DOLLAR:
      return "tokens per dollar";
    case MEMORY_HEADROOM:
      return "memory headroom (GiB)";
    default:
      return "tokens/s";
  }
}

std::string ConfigurationsCsv(const SweepSpace& space, const std::vector<ConfigResult>& results) {
  std::vector<std::string> header = SweepKnobColumns();
  for (const char* column :
       {"state", "meets_constraints", "step_ms", "roofline_step_ms", "tokens_per_s",
        "dollars_per_hour",
        "tokens_per_dollar", "peak_device_gib", "headroom_gib", "host_gib", "overlap",
        "exposed_comm_ms", "binding", "floor_ms", "reason"}) {
    header.push_back(column);
  }
  std::string csv = absl::StrJoin(header, ",") + "\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const ConfigResult& r = results[i];
    std::vector<std::string> row;
    for (const std::string& v : SweepKnobValues(space, space.configs[i])) row.push_back(CsvField(v));
    const bool fits = r.state == ConfigState::kFits;
    const bool planned = r.state != ConfigState::kInvalid && r.state != ConfigState::kDoesNotFit;
    auto figure = [](bool has, const char* format, double v) {
      return has ? absl::StrFormat(format, v) : std::string();
    };
    row.push_back(ConfigStateName(r.state));
    row.push_back(fits ? (r.meets_constraints ? "yes" : "no") : "");
    row.push_back(figure(fits, "%.6f", r.step_ms));
    row.push_back(figure(fits, "%.6f", r.roofline_step_ms));
    row.push_back(figure(fits, "%.3f", r.tokens_per_s));
    row.push_back(figure(r.dollars_per_hour > 0, "%.4f", r.dollars_per_hour));
    row.push_back(figure(fits && r.dollars_per_hour > 0, "%.1f", r.tokens_per_dollar));
    row.push_back(figure(planned, "%.4f", r.peak_device_gib));
    row.push_back(figure(planned, "%.4f", r.headroom_gib));
    row.push_back(figure(planned, "%.4f", r.host_gib));
    row.push_back(figure(fits, "%.4f", r.overlap));
    row.push_back(figure(fits, "%.6f", r.exposed_comm_ms));
    row.push_back(fits ? r.binding : "");
    row.push_back(figure(planned && r.floor_ms > 0, "%.6f", r.floor_ms));
    row.push_back(CsvField(r.reason));
    absl::StrAppend(&csv, absl::StrJoin(row, ","), "\n");
  }
  return csv;
}

std::string BestMarkdown(const SweepSpace& space, const std::vector<ConfigResult>& results,
                         const std::vector<int>& ranked,
                         const std::vector<std::string>& schedule_files,
                         const std::vector<std::string>& summary) {
  const Sweep& sweep = space.sweep;
  std::map<ConfigState, int> counts;
  for (const ConfigResult& r : results) ++counts[r.state];
  std::vector<std::string> md = {
      absl::StrCat("# ", sweep.name(), ": the best configurations (predicted)"), ""};
  if (!sweep.description().empty()) md.insert(md.end(), {sweep.description(), ""});
  md.push_back(absl::StrFormat("Objective: %s. Constraints: %s.", ObjectiveName(sweep.objective()),
                               ConstraintsText(sweep.constraints())));
  md.push_back("");
  md.push_back(ProfileText(sweep));
  md.push_back("");
  int meet = 0;
  for (const ConfigResult& r : results) meet += Ranked(r);
  md.push_back(absl::StrFormat(
      "%d configurations: %d fit (%d of them meet the constraints), %d do not fit, %d invalid, "
      "%d pruned, %d failed.",
      static_cast<int>(results.size()), counts[ConfigState::kFits], meet,
      counts[ConfigState::kDoesNotFit], counts[ConfigState::kInvalid],
      counts[ConfigState::kPruned], counts[ConfigState::kFailed]));
  for (const std::string& line : summary) md.insert(md.end(), {"", line});
  std::set<std::string> prices;
  for (int i = 0; i < sweep.clusters_size(); ++i) {
    const ClusterFamily& f = sweep.clusters(i);
    if (f.price_per_gpu_hour() > 0) {
      prices.insert(absl::StrFormat("%s: $%g per GPU-hour (%s)", f.base(), f.price_per_gpu_hour(),
                                    f.price_source().empty() ? "no source given"
                                                             : f.price_source()));
    }
    for (const GpuType& g : f.gpu_types()) {
      if (g.price_per_gpu_hour() > 0) {
        prices.insert(absl::StrFormat("%s GPUs: $%g per GPU-hour", g.cluster(),
                                      g.price_per_gpu_hour()));
      }
    }
  }
  if (!prices.empty()) {
    md.insert(md.end(), {"", "Prices: " + absl::StrJoin(prices, "; ") + "."});
  }
  if (ranked.empty()) {
    md.insert(md.end(), {"", "**No configuration fits and meets the constraints.** The most "
                             "common reasons (configurations.csv has every one's):", ""});
    for (const std::string& line : CommonReasons(space, results, kCommonReasons)) {
      md.push_back(line);
    }
    return absl::StrJoin(md, "\n") + "\n";
  }
  md.insert(md.end(),
            {"",
             "| rank | model | cluster | strategy | GPUs | profile | step ms | floor ms | tokens/s "
             "| $/h | tokens/$ | peak GiB | headroom GiB | overlap | exposed ms | bound by | "
             "schedule |",
             "|---:|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"});
  for (size_t k = 0; k < ranked.size(); ++k) {
    const ConfigResult& r = results[ranked[k]];
    const SweepConfig& c = space.configs[ranked[k]];
    md.push_back(absl::StrFormat(
        "| %d | %s | %s | %s | %d | %s | %.2f | %.2f | %.0f | %s | %s | %.1f | %.1f | %.0f%% | "
        "%.2f | %s | %s |",
        k + 1, MdCell(sweep.models(c.model)), MdCell(space.members[c.member].label),
        MdCell(StrategyLabel(c)), c.gpus, ComputeProfileFlagName(c.profile), r.step_ms,
        r.roofline_step_ms, r.tokens_per_s,
        r.dollars_per_hour > 0 ? absl::StrFormat("%.2f", r.dollars_per_hour) : "-",
        r.dollars_per_hour > 0 ? absl::StrFormat("%.0f", r.tokens_per_dollar) : "-",
        r.peak_device_gib, r.headroom_gib, 100 * r.overlap, r.exposed_comm_ms, r.binding,
        k < schedule_files.size() ? MdCell(schedule_files[k]) : ""));
  }
  return absl::StrJoin(md, "\n") + "\n";
}

absl::StatusOr<Pictures> WritePictures(const SweepSpace& space,
                                       const std::vector<ConfigResult>& results,
                                       const std::string& dir) {
  Pictures pictures;
  auto note = [&pictures](bool drawn, const std::string& name) {
    (drawn ? pictures.drawn : pictures.skipped).push_back(name + ".png");
  };
  ASSIGN_OR_RETURN(
      const bool gpus,
      WriteParetoChart(space, results, dir, kParetoGpusChart, "GPUs used",
                       [](const SweepConfig& c, const ConfigResult&) {
                         return static_cast<double>(c.gpus);
                       }));
  note(gpus, kParetoGpusChart);
  if (EveryMemberPriced(space)) {
    ASSIGN_OR_RETURN(const bool cost,
                     WriteParetoChart(space, results, dir, kParetoCostChart, "dollars per hour",
                                      [](const SweepConfig&, const ConfigResult& r) {
                                        return r.dollars_per_hour;
                                      }));
    note(cost, kParetoCostChart);
  }
  for (const HeatMap& map : space.sweep.heat_maps()) {
    ASSIGN_OR_RETURN(const bool drawn, WriteHeatMap(space, results, map, dir));
    note(drawn, HeatMapChart(map.x(), map.y()));
  }
  return pictures;
}

std::vector<std::string> CommonReasons(const SweepSpace& space,
                                       const std::vector<ConfigResult>& results, int top) {
  struct Group {
    int count = 0;
    int example = 0;  // its first configuration
  };
  std::map<std::pair<ConfigState, std::string>, Group> groups;
  for (int i = 0; i < static_cast<int>(results.size()); ++i) {
    if (Ranked(results[i])) continue;
    Group& group = groups[{results[i].state, WithoutNumbers(results[i].reason)}];
    if (group.count++ == 0) group.example = i;
  }
  std::vector<std::pair<ConfigState, Group>> common;
  for (const auto& [key, group] : groups) common.push_back({key.first, group});
  std::stable_sort(common.begin(), common.end(), [](const auto& a, const auto& b) {
    return a.second.count != b.second.count ? a.second.count > b.second.count
                                            : a.second.example < b.second.example;
  });
  if (static_cast<int>(common.size()) > top) common.resize(top);
  std::vector<std::string> lines;
  for (const auto& [state, group] : common) {
    const SweepConfig& c = space.configs[group.example];
    lines.push_back(absl::StrFormat("- %s, e.g. %s on %s, %s: %s", StateCount(state, group.count),
                                    space.sweep.models(c.model), space.members[c.member].label,
                                    StrategyLabel(c), MdCell(results[group.example].reason)));
  }
  return lines;
}

}  // namespace zosched
