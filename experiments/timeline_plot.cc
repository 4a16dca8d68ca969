#include "experiments/timeline_plot.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/check.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "experiments/gnuplot.h"

namespace zosched {
namespace {

constexpr int kWidthPx = 1600;
constexpr int kRowPx = 28;
constexpr int kMarginsPx = 200;         // title, x axis and its label, legend
constexpr char kBoxHalfHeight[] = "0.4";  // rows are 1 apart

// Op classes, in legend order; the value is the .dat "class" column.
// kBackward (first-order schedules) and kOther appear only when drawn.
enum OpClass {
  kForward,
  kUpdate,
  kHostToDevice,
  kDeviceToHost,
  kPeer,
  kBackward,
  kOther,
  kNumClasses
};

struct ClassStyle {
  const char* name;
  uint32_t rgb;  // 0xRRGGBB
};

// Okabe-Ito colours: told apart with the common colour-vision deficiencies.
constexpr ClassStyle kClassStyles[kNumClasses] = {
    {"compute forward", 0x0072B2},
    {"update", 0x009E73},
    {"host->device copy", 0xE69F00},
    {"device->host copy", 0xCC79A7},
    {"collective / peer copy", 0xD55E00},
    {"compute backward", 0x56B4E9},
    {"other", 0x999999},
};

// A box's outline: its fill at 60% brightness, so that adjacent ops of one
// class stay apart and zero-length ops show as a line.
uint32_t EdgeColour(uint32_t rgb) {
  uint32_t edge = 0;
  for (int shift = 0; shift <= 16; shift += 8) {
    edge |= (((rgb >> shift) & 0xff) * 6 / 10) << shift;
  }
  return edge;
}

OpClass ClassOf(const Op& op) {
  switch (op.kind_case()) {
    case Op::kCompute:
      switch (op.compute().kind()) {
        case BLOCK_FORWARD:
        case EMBED:
        case HEAD_LOSS:
        case TRAIN_EMBED:
        case TRAIN_BLOCK_FORWARD:
        case TRAIN_HEAD_LOSS:
          return kForward;
        case UPDATE:
        case CAST:
        case PROJECTED_GRADIENT:
        case OPTIMIZER_STEP:
          return kUpdate;
        case HEAD_BACKWARD:
        case BLOCK_BACKWARD:
        case EMBED_BACKWARD:
        case GRAD_ACCUMULATE:
          return kBackward;
        default:
          return kOther;
      }
    case Op::kCopy:
      switch (op.copy().direction()) {
        case HOST_TO_DEVICE:
          return kHostToDevice;
        case DEVICE_TO_HOST:
          return kDeviceToHost;
        case DEVICE_TO_DEVICE:
          return kPeer;
        default:
          return kOther;
      }
    case Op::kCollective:
      return kPeer;
    default:
      return kOther;
  }
}

// A gnuplot line across the plot just above row `row`.
std::string Separator(int row, const char* style) {
  return absl::StrFormat(
      "set arrow from graph 0, first %d.5 to graph 1, first %d.5 nohead back %s\n",
      row - 1, row - 1, style);
}

// One drawn op interval, its times relative to its timeline's step start.
struct Box {
  int64_t start_ns;
  int64_t end_ns;
  int row;  // 0 at the top
  OpClass op_class;
  int64_t op_id;
};

// Nanoseconds as milliseconds, exactly: 1234567 -> "1.234567".
std::string Millis(int64_t ns) {
  const uint64_t magnitude =
      ns < 0 ? uint64_t{0} - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  return absl::StrFormat("%s%d.%06d", ns < 0 ? "-" : "", magnitude / 1000000,
                         magnitude % 1000000);
}

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Rows of one timeline: device id -> stream name -> row among that
// timeline's rows (device by device, stream by stream, in schedule order).
using RowMap = absl::flat_hash_map<int32_t, absl::flat_hash_map<std::string, int>>;

// Appends the step's op intervals of `plot` as boxes, shifted to its step
// start, on rows starting at `first_row`. Sets `*step_end_ns` to the step's
// end, shifted likewise: its StepInterval's end, else the latest op end.
absl::Status AddBoxes(const absl::flat_hash_map<int64_t, const Op*>& op_by_id,
                      const RowMap& rows, const PlotTimeline& plot, int32_t step,
                      int first_row, std::vector<Box>* boxes, int64_t* step_end_ns) {
  const Timeline& timeline = *plot.timeline;
  const StepInterval* step_interval = nullptr;
  for (const StepInterval& s : timeline.steps()) {
    if (s.step() == step) {
      step_interval = &s;
      break;
    }
  }
  if (step_interval != nullptr && step_interval->end_ns() < step_interval->start_ns()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s timeline: step %d ends (%d ns) before it starts (%d ns)", plot.label, step,
        step_interval->end_ns(), step_interval->start_ns()));
  }
  int64_t step_start_ns = step_interval != nullptr ? step_interval->start_ns()
                                                   : std::numeric_limits<int64_t>::max();
  int64_t step_end_abs_ns = step_interval != nullptr ? step_interval->end_ns()
                                                     : std::numeric_limits<int64_t>::min();
  const size_t first_box = boxes->size();
  for (const OpInterval& interval : timeline.ops()) {
    if (interval.step() != step) continue;
    auto op = op_by_id.find(interval.op_id());
    if (op == op_by_id.end()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s timeline, step %d: op id %d is not in the schedule",
                          plot.label, step, interval.op_id()));
    }
    const Op& o = *op->second;
    auto device = rows.find(o.device());
    const int* row = nullptr;
    if (device != rows.end()) {
      auto stream = device->second.find(o.stream());
      if (stream != device->second.end()) row = &stream->second;
    }
    if (interval.device() != o.device() || interval.stream() != o.stream() ||
        interval.end_ns() < interval.start_ns() || row == nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s timeline, step %d: op %d runs on device %d stream '%s' over "
          "[%d, %d) ns; the schedule puts op %d '%s' on device %d stream '%s'%s",
          plot.label, step, o.id(), interval.device(), interval.stream(),
          interval.start_ns(), interval.end_ns(), o.id(), o.name(), o.device(),
          o.stream(), row == nullptr ? ", which its devices lack" : ""));
    }
    boxes->push_back(Box{interval.start_ns(), interval.end_ns(), first_row + *row,
                         ClassOf(o), o.id()});
    if (step_interval == nullptr) {
      step_start_ns = std::min(step_start_ns, interval.start_ns());
      step_end_abs_ns = std::max(step_end_abs_ns, interval.end_ns());
    }
  }
  if (boxes->size() == first_box) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s timeline has no op interval in step %d", plot.label, step));
  }
  for (size_t i = first_box; i < boxes->size(); ++i) {
    Box& box = (*boxes)[i];
    if (__builtin_sub_overflow(box.start_ns, step_start_ns, &box.start_ns) ||
        __builtin_sub_overflow(box.end_ns, step_start_ns, &box.end_ns)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s timeline, step %d: op %d's times overflow when shifted to the step "
          "start %d ns",
          plot.label, step, box.op_id, step_start_ns));
    }
  }
  // Cannot overflow: the step interval's end is at least its start, and an
  // op's end shifted without overflow above.
  *step_end_ns = step_end_abs_ns - step_start_ns;
  return absl::OkStatus();
}

}  // namespace

absl::Status PlotTimelines(const Schedule& schedule,
                           const std::vector<PlotTimeline>& timelines,
                           int32_t step, const std::string& title,
                           const std::string& png_path) {
  if (timelines.empty()) return absl::InvalidArgumentError("no timelines to plot");
  if (!absl::EndsWith(png_path, ".png") || Basename(png_path) == ".png") {
    return absl::InvalidArgumentError(
        absl::StrCat("plot path must name a .png file: '", png_path, "'"));
  }
  const std::string base = png_path.substr(0, png_path.size() - 4);
  const std::string dat_path = base + ".dat";
  const std::string gp_path = base + ".gp";

  absl::flat_hash_map<int64_t, const Op*> op_by_id;
  op_by_id.reserve(schedule.ops_size());
  for (const Op& op : schedule.ops()) op_by_id.emplace(op.id(), &op);
  RowMap rows;
  std::vector<std::string> row_names;  // of one timeline: "d<id> <stream>"
  for (const ScheduleDevice& device : schedule.devices()) {
    for (const Stream& stream : device.streams()) {
      rows[device.id()].emplace(stream.name(), static_cast<int>(row_names.size()));
      row_names.push_back(absl::StrFormat("d%d %s", device.id(), stream.name()));
    }
  }
  const int rows_per_timeline = static_cast<int>(row_names.size());
  const int num_rows = rows_per_timeline * static_cast<int>(timelines.size());

  std::vector<Box> boxes;
  std::vector<int64_t> step_end_ns(timelines.size());
  for (size_t t = 0; t < timelines.size(); ++t) {
    CHECK(timelines[t].timeline != nullptr) << "timeline " << t << " is null";
    RETURN_IF_ERROR(AddBoxes(op_by_id, rows, timelines[t], step,
                             static_cast<int>(t) * rows_per_timeline, &boxes,
                             &step_end_ns[t]));
  }

  // The data: one line per box.
  std::string dat = "# start_ms end_ms row class op_id\n";
  dat.reserve(dat.size() + boxes.size() * 48);
  int64_t lo_ns = 0;
  int64_t hi_ns = *std::max_element(step_end_ns.begin(), step_end_ns.end());
  bool class_drawn[kNumClasses] = {};
  for (const Box& box : boxes) {
    absl::StrAppend(&dat, Millis(box.start_ns), " ", Millis(box.end_ns), " ", box.row,
                    " ", static_cast<int>(box.op_class), " ", box.op_id, "\n");
    lo_ns = std::min(lo_ns, box.start_ns);
    hi_ns = std::max(hi_ns, box.end_ns);
    class_drawn[box.op_class] = true;
  }
  // A little room right of the last box, so that its edge clears the frame.
  const int64_t pad_ns = std::max<int64_t>(1, (hi_ns / 2 - lo_ns / 2) / 50);
  hi_ns = hi_ns > std::numeric_limits<int64_t>::max() - pad_ns
              ? std::numeric_limits<int64_t>::max()
              : hi_ns + pad_ns;

  // The script.
  const std::string dat_name = Basename(dat_path);
  std::string gp = absl::StrFormat(
      "# A timeline picture written by zosched (experiments/timeline_plot.cc).\n"
      "# Restyle it here and redraw with `gnuplot %s`, from any directory:\n"
      "# the data (%s) and the picture are found next to this script.\n"
      "# %s: one line per op interval, \"start_ms end_ms row class op_id\";\n"
      "# times from the step start, rows from 0 at the top, classes as in `colour`.\n\n",
      Basename(gp_path), dat_name, dat_name);
  absl::StrAppend(&gp, kGnuplotHere, "\n",
                  absl::StrFormat("set terminal pngcairo size %d,%d font 'sans,10' noenhanced\n",
                                  kWidthPx, kRowPx * num_rows + kMarginsPx),
                  "set output here.", GnuplotString(Basename(png_path)), "\n", "set title ",
                  GnuplotString(title), "\n", "set xlabel 'time from step start (ms)'\n",
                  "set xrange [", Millis(lo_ns), ":", Millis(hi_ns), "]\n",
                  absl::StrFormat("set yrange [%d.5:-0.5]\n", num_rows - 1), "set mxtics\n",
                  "set grid xtics mxtics back lc rgb '#e0e0e0', lc rgb '#f2f2f2'\n",
                  "set key below center horizontal reverse Left samplen 3 width 2 spacing 1.5\n",
                  "set bmargin 6\n", "set ytics scale 0 nomirror ( \\\n");
  for (int r = 0; r < num_rows; ++r) {
    const std::string& label = timelines[r / rows_per_timeline].label;
    absl::StrAppend(&gp, "  ",
                    GnuplotString(absl::StrCat(label, " ", row_names[r % rows_per_timeline])),
                    " ", r, r + 1 < num_rows ? ", \\\n" : ")\n");
  }
  absl::StrAppend(&gp, "# Lines between devices (grey) and between timelines (black).\n");
  for (size_t t = 0; t < timelines.size(); ++t) {
    int row = static_cast<int>(t) * rows_per_timeline;
    if (t > 0) absl::StrAppend(&gp, Separator(row, "lc rgb 'black' lw 2"));
    for (const ScheduleDevice& device : schedule.devices()) {
      if (row > static_cast<int>(t) * rows_per_timeline && device.streams_size() > 0) {
        absl::StrAppend(&gp, Separator(row, "lc rgb '#b0b0b0' lw 1"));
      }
      row += device.streams_size();
    }
  }
  absl::StrAppend(&gp, "# Each timeline's step end (dashed).\n");
  for (size_t t = 0; t < timelines.size(); ++t) {
    const int first = static_cast<int>(t) * rows_per_timeline;
    absl::StrAppend(
        &gp, absl::StrFormat("set arrow from first %s, first %.1f to first %s, first %.1f "
                             "nohead front dt 2 lw 1.5 lc rgb 'black'\n",
                             Millis(step_end_ns[t]), first - 0.5, Millis(step_end_ns[t]),
                             first + rows_per_timeline - 0.5));
  }
  // Colours by class (0 compute forward, 1 update, ...), as gnuplot reads a
  // variable colour: an integer 0xRRGGBB.
  absl::StrAppend(&gp, "# Colours by class:");
  for (int c = 0; c < kNumClasses; ++c) {
    absl::StrAppend(&gp, c > 0 ? "," : "", " ", c, " ", kClassStyles[c].name);
  }
  std::string fills, edges;
  for (int c = 0; c < kNumClasses; ++c) {
    absl::StrAppend(&fills, c > 0 ? ", " : "", absl::StrFormat("0x%06X", kClassStyles[c].rgb));
    absl::StrAppend(&edges, c > 0 ? ", " : "",
                    absl::StrFormat("0x%06X", EdgeColour(kClassStyles[c].rgb)));
  }
  absl::StrAppend(&gp, "\narray colour[", kNumClasses, "] = [", fills, "]\n",
                  "array edge[", kNumClasses, "] = [", edges, "]\n",
                  "# Boxes narrower than this (about 3 pixels) are outlined in their fill\n"
                  "# colour, so that dense rows keep their hue.\n",
                  "narrow_ms = ", Millis((hi_ns / 2 - lo_ns / 2) / (kWidthPx / 2) * 3), "\n\n");
  // Fills, then outlines.
  const std::string box = absl::StrCat("using (($1+$2)/2):3:(($2-$1)/2):(", kBoxHalfHeight, ")");
  absl::StrAppend(&gp, "plot here.", GnuplotString(dat_name), " ", box,
                  ":(colour[int($4)+1]) \\\n"
                  "       with boxxyerror fs solid 1.0 noborder lc rgb variable notitle, \\\n"
                  "     '' ", box, ":($2-$1 < narrow_ms ? colour[int($4)+1] : edge[int($4)+1]) \\\n"
                  "       with boxxyerror fs empty border lw 1 lc rgb variable notitle");
  for (int c = 0; c < kNumClasses; ++c) {
    if ((c == kOther || c == kBackward) && !class_drawn[c]) continue;
    absl::StrAppend(&gp, ", \\\n  keyentry with boxxyerror fs solid 1.0 noborder fc rgb ",
                    absl::StrFormat("'#%06X'", kClassStyles[c].rgb), " title ",
                    GnuplotString(kClassStyles[c].name));
  }
  absl::StrAppend(&gp, ", \\\n  keyentry with lines dt 2 lw 1.5 lc rgb 'black' title 'step end'\n");

  RETURN_IF_ERROR(WriteFile(dat_path, dat));
  RETURN_IF_ERROR(WriteFile(gp_path, gp));
  return RunGnuplot(gp_path, png_path);
}

}  // namespace zosched
