// How several directions a step train (n-SPSA) against one, at the same
// number of forward passes: MeZO on opt-tiny (random initialisation, the
// synthetic sentiment task, batch --batch, sequence --seq) on one rank of the
// CPU testbed, with q = 1, 4 and 16 directions (--directions), each run
// given --forwards forward passes (2q a step: q = 1 runs --forwards / 2
// steps, q = 16 a 32nd of them), the same η and seed.
//
//   ./bazelw run //experiments:directions_study [-- --forwards=4800]
//
// Writes to --out_dir (default out/directions_study in the workspace):
//   directions_study.csv  per run and step: directions, step, forwards so
//                         far, the step's loss (the mean of its 2q passes'
//                         (L+ + L-)/2) and its mean over the last --window
//                         steps' forwards
//   directions_study.png  that mean against the forwards, a line per q
//   q<N>/                 each run's train outputs (train.csv, trajectory.log)
// and prints per q: the steps, the loss over the first and the last tenth
// of the forwards, the final dev accuracy and loss, and the wall time.
// Command line and exit status as every tool's (base/command_line.h): 0 on
// success; 2 for bad flags or when train refuses to run; 1 when a run or
// gnuplot fails.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/command_line.h"
#include "base/files.h"
#include "base/flag_checks.h"
#include "base/output_dir.h"
#include "base/status_macros.h"
#include "experiments/gnuplot.h"
#include "experiments/testbed_cycle.h"

ABSL_FLAG(std::string, out_dir, "", "outputs (default: out/directions_study in the workspace)");
ABSL_FLAG(std::vector<std::string>, directions, std::vector<std::string>({"1", "4", "16"}),
          "the q to compare, each 1 to 1024");
ABSL_FLAG(int32_t, forwards, 4800,
          "forward passes of each run (a multiple of 2q for every q: q = 16 needs 32)");
ABSL_FLAG(int32_t, batch, 16, "examples per step");
ABSL_FLAG(int32_t, seq, 32, "sequence length");
ABSL_FLAG(double, lr, 5e-4, "learning rate η, the same for every q");
ABSL_FLAG(int32_t, window, 400, "forward passes the plotted loss is averaged over");
ABSL_FLAG(std::string, programs_dir, ".",
          "where the programs are: train/train below it, as Bazel lays them out");

namespace zosched {
namespace {

struct StudyRun {
  int directions = 1;
  std::vector<double> loss;  // per step
  std::string evaluation;    // train's "final: dev accuracy ..." line
  double seconds = 0;
};

// The losses of train.csv (columns step, loss, ...), in step order.
absl::StatusOr<std::vector<double>> ReadLosses(const std::string& path) {
  std::string text;
  RETURN_IF_ERROR(ReadFileToString(path, &text));
  std::vector<double> losses;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (++line_number == 1) continue;  // the header
    const std::vector<absl::string_view> fields = absl::StrSplit(line, ',');
    double loss = 0;
    if (fields.size() < 2 || !absl::SimpleAtod(fields[1], &loss)) {
      return absl::InternalError(
          absl::StrFormat("%s:%d: expected step,loss,... got '%s'", path, line_number, line));
    }
    losses.push_back(loss);
  }
  return losses;
}

// The mean of `values` over [begin, end).
double Mean(const std::vector<double>& values, size_t begin, size_t end) {
  double sum = 0;
  for (size_t i = begin; i < end; ++i) sum += values[i];
  return end > begin ? sum / (end - begin) : 0;
}

absl::StatusOr<StudyRun> Train(int q, const std::string& out) {
  const int forwards = absl::GetFlag(FLAGS_forwards);
  StudyRun run;
  run.directions = q;
  const std::string dir = absl::StrCat(out, "/q", q);
  const std::string log = dir + ".log";
  const auto start = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(RunRuntimeProgram(
      absl::StrCat("the run of ", q, " directions"),
      {TrainProgram(absl::GetFlag(FLAGS_programs_dir)), "--model=opt-tiny", "--strategy=mezo",
       absl::StrCat("--directions=", q), absl::StrCat("--steps=", forwards / (2 * q)),
       absl::StrCat("--batch=", absl::GetFlag(FLAGS_batch)),
       absl::StrCat("--seq=", absl::GetFlag(FLAGS_seq)),
       absl::StrCat("--lr=", absl::GetFlag(FLAGS_lr)), "--seed=0", "--checkpoint_every=0",
       "--out_dir=" + dir, "--overwrite"},
      log));
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSIGN_OR_RETURN(run.loss, ReadLosses(dir + "/train.csv"));
  std::string text;
  RETURN_IF_ERROR(ReadFileToString(log, &text));
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(line, "final: dev accuracy")) run.evaluation = std::string(line);
  }
  return run;
}

absl::Status WriteOutputs(const std::vector<StudyRun>& runs, const std::string& out) {
  const int window = absl::GetFlag(FLAGS_window);
  std::string csv = "directions,step,forwards,loss,loss_over_window\n";
  std::string data;  // gnuplot: one block per run
  for (const StudyRun& run : runs) {
    const int per_step = 2 * run.directions;
    const size_t steps_in_window = std::max(1, window / per_step);
    for (size_t s = 0; s < run.loss.size(); ++s) {
      const size_t begin = s + 1 >= steps_in_window ? s + 1 - steps_in_window : 0;
      const double smoothed = Mean(run.loss, begin, s + 1);
      const int64_t forwards = static_cast<int64_t>(s + 1) * per_step;
      absl::StrAppendFormat(&csv, "%d,%d,%d,%.6f,%.6f\n", run.directions, s, forwards,
                            run.loss[s], smoothed);
      if (s + 1 >= steps_in_window) absl::StrAppendFormat(&data, "%d %.6f\n", forwards, smoothed);
    }
    data += "\n\n";
  }
  RETURN_IF_ERROR(WriteFile(out + "/directions_study.csv", csv));
  RETURN_IF_ERROR(WriteFile(out + "/directions_study.dat", data));
  std::string gp = absl::StrCat(
      kGnuplotHere, "\n", "set terminal pngcairo size 900,560 font 'sans,10' noenhanced\n",
      "set output here.'directions_study.png'\n",
      absl::StrFormat("set title 'MeZO on opt-tiny (CPU testbed): loss against forward passes, "
                      "mean over %d forwards'\n",
                      window),
      "set xlabel 'forward passes'\nset ylabel 'training loss (nats)'\nset key top right\n",
      "set grid\nplot ");
  for (size_t i = 0; i < runs.size(); ++i) {
    absl::StrAppendFormat(&gp, "%shere.'directions_study.dat' index %d with lines lw 2 title '%d "
                               "direction%s a step'",
                          i > 0 ? ", " : "", i, runs[i].directions,
                          runs[i].directions > 1 ? "s" : "");
  }
  gp += "\n";
  const std::string script = out + "/directions_study.gp";
  RETURN_IF_ERROR(WriteFile(script, gp));
  return RunGnuplot(script, out + "/directions_study.png");
}

absl::Status Run() {
  std::vector<int> qs;
  for (const std::string& text : absl::GetFlag(FLAGS_directions)) {
    int q = 0;
    if (!absl::SimpleAtoi(text, &q) || q < 1 || q > 1024) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--directions: '%s' is not a number of directions (1 to 1024)", text));
    }
    if (absl::GetFlag(FLAGS_forwards) % (2 * q) != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--forwards=%d is not a multiple of 2q = %d (the forward passes of a step of %d "
          "directions): give a multiple of every 2q",
          absl::GetFlag(FLAGS_forwards), 2 * q, q));
    }
    qs.push_back(q);
  }
  const std::string out = OutputDir(absl::GetFlag(FLAGS_out_dir), "directions_study");
  RETURN_IF_ERROR(MakeDirectories(out));
  std::vector<StudyRun> runs;
  std::printf("MeZO on opt-tiny, %d forward passes each, batch %d, seq %d, η %g, seed 0\n",
              absl::GetFlag(FLAGS_forwards), absl::GetFlag(FLAGS_batch),
              absl::GetFlag(FLAGS_seq), absl::GetFlag(FLAGS_lr));
  std::printf("%-10s %6s %12s %12s %9s  %s\n", "directions", "steps", "loss_first", "loss_last",
              "wall_s", "final evaluation");
  for (int q : qs) {
    ASSIGN_OR_RETURN(StudyRun run, Train(q, out));
    const size_t tenth = std::max<size_t>(1, run.loss.size() / 10);
    std::printf("%-10d %6zu %12.4f %12.4f %9.1f  %s\n", q, run.loss.size(),
                Mean(run.loss, 0, tenth), Mean(run.loss, run.loss.size() - tenth, run.loss.size()),
                run.seconds, run.evaluation.c_str());
    runs.push_back(std::move(run));
  }
  std::printf("(loss_first, loss_last: the mean step loss over the first and the last tenth of "
              "the forward passes)\n");
  RETURN_IF_ERROR(WriteOutputs(runs, out));
  std::printf("wrote %s/{directions_study.csv, directions_study.png, q<N>/}\n", out.c_str());
  return absl::OkStatus();
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  zosched::ParseCommandLineOrExit(
      argc, argv,
      {"directions_study", "",
       "MeZO with 1, 4 and 16 perturbation directions a step on opt-tiny, on the CPU testbed, at\n"
       "the same number of forward passes: the loss against the forwards, as a CSV and a plot."});
  absl::Status status = zosched::CheckFlagRange("forwards", absl::GetFlag(FLAGS_forwards), 32,
                                                100000000, "forward passes per run");
  if (status.ok()) {
    status = zosched::CheckFlagRange("window", absl::GetFlag(FLAGS_window), 1, 100000000,
                                     "forward passes");
  }
  if (status.ok()) status = zosched::Run();
  return zosched::ExitWith("directions_study", status);
}
