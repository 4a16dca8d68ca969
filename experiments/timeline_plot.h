// Timeline pictures: a Gantt chart of one step of one or more Timelines of a
// Schedule (e.g. predicted above measured), drawn by gnuplot into a PNG.
//
// The data and the gnuplot script stay next to the PNG, so a picture can be
// restyled by editing the script and running `gnuplot NAME.gp` (from any
// directory: the script finds its data next to itself).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "schedule/schedule.pb.h"
#include "schedule/timeline.pb.h"

namespace zosched {

// One timeline to draw and the word its rows start with.
struct PlotTimeline {
  const Timeline* timeline;  // not owned; must not be null
  std::string label;         // e.g. "predicted", "measured"
};

// Draws step `step` of each of `timelines` (Timelines of `schedule`) one
// above the other, in the given order, into a PNG at `png_path`.
//
// Rows: for each timeline, for each device of the schedule (in schedule
// order), one row per stream of that device (in schedule order, with or
// without ops), labelled "<label> d<device id> <stream name>"; grey lines
// part devices, black lines timelines. Each op interval of the step is a
// filled box from its start to its end, outlined in a darker shade (so that
// adjacent ops stay apart and a zero-length op shows as a line). The x axis
// is time in milliseconds from the step start, each timeline shifted so that
// its own step starts at 0; a dashed line marks each timeline's step end,
// and the axis runs from 0 (or an earlier op start) to the latest step end. A timeline's step spans
// its StepInterval for `step` if it has one, else [earliest start, latest end] of the step's op
// intervals (as timeline_metrics.h defines the step). Ops of other steps are neither drawn nor
// checked.
//
// Colours, by op class (the legend names them): compute forward
// (BLOCK_FORWARD, EMBED, HEAD_LOSS and their first-order TRAIN_ twins),
// update (UPDATE, CAST, PROJECTED_GRADIENT, OPTIMIZER_STEP), host->device
// copy, device->host copy, collective / peer copy (collectives and
// DEVICE_TO_DEVICE copies); "compute backward" (HEAD_BACKWARD,
// BLOCK_BACKWARD, EMBED_BACKWARD, GRAD_ACCUMULATE) and "other" (ops with an
// unspecified kind or direction) only appear when such an op is drawn.
// `title` is the picture's title. The picture is 1600 pixels wide and about
// 28 pixels high per row plus 200 for margins. Labels and the title are
// drawn verbatim (no gnuplot enhanced-text markup; control characters
// become spaces).
//
// Files: `png_path` must end in ".png"; with BASE = `png_path` minus ".png",
// writes BASE.dat (a comment line, then one line per drawn op interval:
// "start_ms end_ms row class op_id", rows counted from 0 at the top) and
// BASE.gp (the script, which reads BASE.dat and writes `png_path`), keeps
// both, and runs `gnuplot BASE.gp` (found on PATH; spawned directly, no
// shell), which writes the PNG. Existing files are replaced.
//
// Errors:
// - InvalidArgument if `timelines` is empty, `png_path` does not end in
//   ".png", a timeline has no op interval in step `step` (naming its label),
//   or an interval of the step names an op id the schedule lacks, a device
//   or stream other than that op's (or one the schedule's devices lack), or
//   ends before it starts (naming the label and op id), or the timeline's
//   StepInterval for `step` ends before it starts;
// - FailedPrecondition "gnuplot not found; install the Debian package
//   gnuplot-nox (./bazelw installs it)" when gnuplot cannot be found on
//   PATH, or other FailedPrecondition when it cannot be started;
// - Internal with gnuplot's exit status (or signal) and the tail of its
//   standard error when it fails or writes no PNG;
// - the file errors of writing BASE.dat and BASE.gp (NotFound,
//   PermissionDenied, ... from errno), naming the path and the OS reason.
absl::Status PlotTimelines(const Schedule& schedule,
                           const std::vector<PlotTimeline>& timelines,
                           int32_t step, const std::string& title,
                           const std::string& png_path);

}  // namespace zosched
