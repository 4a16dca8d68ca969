// How the ZO variants train at the same number of forward passes: MeZO
// with one and with several directions a step (n-SPSA), over every weight
// or over LoRA adapters or a prefix with the base frozen, on opt-tiny (random
// initialisation, the synthetic sentiment task, batch --batch, sequence
// --seq) on one rank of the CPU testbed. --runs names them: "q<N>" trains
// every weight with N directions a step, "lora_r<R>" and "lora_r<R>_q<N>"
// rank-R adapters on the query and value projections (α 2R, scaling 2),
// "prefix_k<K>" and "prefix_k<K>_q<N>" a prefix of K virtual tokens
// (initialised from the base's activations on K drawn tokens); default q1,
// q4, q16, lora_r8 and prefix_k5. Each run is given --forwards forward
// passes (2q a step: q = 1 runs --forwards / 2 steps, q = 16 a 32nd of
// them) and the same seed; full-weight runs take --lr, LoRA runs --lora_lr
// and prefix runs --prefix_lr (MeZO too tunes their η apart, orders of
// magnitude above full fine-tuning's).
//
//   ./bazelw run //experiments:zo_variants_study [-- --forwards=4800]
//
// Writes to --out_dir (default out/zo_variants_study in the workspace):
//   zo_variants_study.csv  per run and step: run, directions, peft, step,
//                          forwards so far, the step's loss (the mean of
//                          its 2q passes' (L+ + L-)/2) and its mean over
//                          the last --window steps' forwards
//   zo_variants_study.png  that mean against the forwards, a line per run
//   <run>/                 each run's train outputs (train.csv,
//                          trajectory.log; a LoRA or prefix run's adapter/)
// and prints per run: the steps, the loss over the first and the last tenth
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
#include "absl/strings/strip.h"
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
#include "models/adapters.h"
#include "schedule/training_settings.h"

ABSL_FLAG(std::string, out_dir, "", "outputs (default: out/zo_variants_study in the workspace)");
ABSL_FLAG(std::vector<std::string>, runs,
          std::vector<std::string>({"q1", "q4", "q16", "lora_r8", "prefix_k5"}),
          "the variants to compare: q<N> (every weight, N directions a step), lora_r<R> or "
          "lora_r<R>_q<N> (rank-R adapters on query and value), prefix_k<K> or prefix_k<K>_q<N> "
          "(a prefix of K virtual tokens)");
ABSL_FLAG(int32_t, forwards, 4800,
          "forward passes of each run (a multiple of 2q for every q: q = 16 needs 32)");
ABSL_FLAG(int32_t, batch, 16, "examples per step");
ABSL_FLAG(int32_t, seq, 32, "sequence length");
ABSL_FLAG(double, lr, 5e-4, "learning rate η of the runs over every weight");
ABSL_FLAG(double, lora_lr, 2e-2, "learning rate η of the LoRA runs");
ABSL_FLAG(double, prefix_lr, 1e-2, "learning rate η of the prefix runs (MeZO's for prefix ZO)");
ABSL_FLAG(int32_t, window, 400, "forward passes the plotted loss is averaged over");
ABSL_FLAG(std::string, programs_dir, ".",
          "where the programs are: train/train below it, as Bazel lays them out");

namespace zosched {
namespace {

// One variant of --runs.
struct Variant {
  std::string name;    // as given: "q4", "lora_r8", "prefix_k5"
  int directions = 1;  // q
  int lora_rank = 0;   // 0: no LoRA
  int prefix_tokens = 0;  // 0: no prefix; with lora_rank 0 too, every weight trains
};

struct StudyRun {
  Variant variant;
  std::vector<double> loss;  // per step
  std::string evaluation;    // train's "final: dev accuracy ..." line
  double seconds = 0;
};

// "q<N>", "lora_r<R>", "lora_r<R>_q<N>", "prefix_k<K>" or "prefix_k<K>_q<N>".
absl::StatusOr<Variant> ParseVariant(const std::string& text) {
  Variant v;
  v.name = text;
  absl::string_view rest = text;
  auto number = [&](absl::string_view prefix, int low, int high, int* out) {
    if (!absl::ConsumePrefix(&rest, prefix)) return false;
    const size_t end = rest.find('_');
    const absl::string_view digits = rest.substr(0, end);
    rest = end == absl::string_view::npos ? absl::string_view() : rest.substr(end + 1);
    return absl::SimpleAtoi(digits, out) && *out >= low && *out <= high;
  };
  bool ok = true;
  if (absl::StartsWith(rest, "lora_r")) ok = number("lora_r", 1, kMaxLoraRank, &v.lora_rank);
  if (absl::StartsWith(rest, "prefix_k")) {
    ok = number("prefix_k", 1, kMaxPrefixTokens, &v.prefix_tokens);
  }
  if (ok && !rest.empty()) ok = number("q", 1, kMaxDirections, &v.directions);
  if (!ok || !rest.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--runs: '%s' is not a variant (expected q<N> with N in 1..1024, lora_r<R> with R in "
        "1..4096, prefix_k<K> with K in 1..4096, or either with _q<N>)",
        text));
  }
  return v;
}

// "lora r8", "prefix k5" or "none": the CSV's peft column.
std::string PeftColumn(const Variant& v) {
  if (v.lora_rank > 0) return absl::StrCat("lora r", v.lora_rank);
  if (v.prefix_tokens > 0) return absl::StrCat("prefix k", v.prefix_tokens);
  return "none";
}

// "every weight, 4 directions", "LoRA r8, 1 direction", "prefix k5, ...".
std::string Describe(const Variant& v) {
  const std::string what = v.lora_rank > 0       ? absl::StrCat("LoRA r", v.lora_rank)
                           : v.prefix_tokens > 0 ? absl::StrCat("prefix k", v.prefix_tokens)
                                                 : std::string("every weight");
  return absl::StrFormat("%s, %d direction%s", what, v.directions, v.directions > 1 ? "s" : "");
}

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

absl::StatusOr<StudyRun> Train(const Variant& v, const std::string& out) {
  const int forwards = absl::GetFlag(FLAGS_forwards);
  const int q = v.directions;
  StudyRun run;
  run.variant = v;
  const std::string dir = absl::StrCat(out, "/", v.name);
  const std::string log = dir + ".log";
  std::vector<std::string> argv = {
      TrainProgram(absl::GetFlag(FLAGS_programs_dir)), "--model=opt-tiny", "--strategy=mezo",
      absl::StrCat("--directions=", q), absl::StrCat("--steps=", forwards / (2 * q)),
      absl::StrCat("--batch=", absl::GetFlag(FLAGS_batch)),
      absl::StrCat("--seq=", absl::GetFlag(FLAGS_seq)),
      absl::StrCat("--lr=", v.lora_rank > 0       ? absl::GetFlag(FLAGS_lora_lr)
                            : v.prefix_tokens > 0 ? absl::GetFlag(FLAGS_prefix_lr)
                                                  : absl::GetFlag(FLAGS_lr)),
      "--seed=0", "--checkpoint_every=0", "--out_dir=" + dir, "--overwrite"};
  if (v.lora_rank > 0) {
    argv.push_back("--peft=lora");
    argv.push_back(absl::StrCat("--lora_rank=", v.lora_rank));
    argv.push_back(absl::StrCat("--lora_alpha=", 2 * v.lora_rank));
  }
  if (v.prefix_tokens > 0) {
    argv.push_back("--peft=prefix");
    argv.push_back(absl::StrCat("--prefix_tokens=", v.prefix_tokens));
  }
  const auto start = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(RunRuntimeProgram(absl::StrCat("the run ", v.name), argv, log));
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
  std::string csv = "run,directions,peft,step,forwards,loss,loss_over_window\n";
  std::string data;  // gnuplot: one block per run
  for (const StudyRun& run : runs) {
    const int per_step = 2 * run.variant.directions;
    const std::string peft = PeftColumn(run.variant);
    const size_t steps_in_window = std::max(1, window / per_step);
    for (size_t s = 0; s < run.loss.size(); ++s) {
      const size_t begin = s + 1 >= steps_in_window ? s + 1 - steps_in_window : 0;
      const double smoothed = Mean(run.loss, begin, s + 1);
      const int64_t forwards = static_cast<int64_t>(s + 1) * per_step;
      absl::StrAppendFormat(&csv, "%s,%d,%s,%d,%d,%.6f,%.6f\n", run.variant.name,
                            run.variant.directions, peft, s, forwards, run.loss[s], smoothed);
      if (s + 1 >= steps_in_window) absl::StrAppendFormat(&data, "%d %.6f\n", forwards, smoothed);
    }
    data += "\n\n";
  }
  RETURN_IF_ERROR(WriteFile(out + "/zo_variants_study.csv", csv));
  RETURN_IF_ERROR(WriteFile(out + "/zo_variants_study.dat", data));
  std::string gp = absl::StrCat(
      kGnuplotHere, "\n", "set terminal pngcairo size 900,560 font 'sans,10' noenhanced\n",
      "set output here.'zo_variants_study.png'\n",
      absl::StrFormat("set title 'MeZO on opt-tiny (CPU testbed): loss against forward passes, "
                      "mean over %d forwards'\n",
                      window),
      "set xlabel 'forward passes'\nset ylabel 'training loss (nats)'\nset key top right\n",
      "set grid\nplot ");
  for (size_t i = 0; i < runs.size(); ++i) {
    absl::StrAppendFormat(&gp, "%shere.'zo_variants_study.dat' index %d with lines lw 2 title '%s'",
                          i > 0 ? ", " : "", i, Describe(runs[i].variant));
  }
  gp += "\n";
  const std::string script = out + "/zo_variants_study.gp";
  RETURN_IF_ERROR(WriteFile(script, gp));
  return RunGnuplot(script, out + "/zo_variants_study.png");
}

absl::Status Run() {
  std::vector<Variant> variants;
  for (const std::string& text : absl::GetFlag(FLAGS_runs)) {
    ASSIGN_OR_RETURN(const Variant v, ParseVariant(text));
    const int q = v.directions;
    if (absl::GetFlag(FLAGS_forwards) % (2 * q) != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--forwards=%d is not a multiple of 2q = %d (the forward passes of a step of %d "
          "directions): give a multiple of every 2q",
          absl::GetFlag(FLAGS_forwards), 2 * q, q));
    }
    for (const Variant& seen : variants) {
      if (seen.name == v.name) {
        return absl::InvalidArgumentError(absl::StrFormat("--runs names '%s' twice", v.name));
      }
    }
    variants.push_back(v);
  }
  const std::string out = OutputDir(absl::GetFlag(FLAGS_out_dir), "zo_variants_study");
  RETURN_IF_ERROR(MakeDirectories(out));
  std::vector<StudyRun> runs;
  std::printf("MeZO on opt-tiny, %d forward passes each, batch %d, seq %d, η %g (LoRA: %g, "
              "prefix: %g), seed 0\n",
              absl::GetFlag(FLAGS_forwards), absl::GetFlag(FLAGS_batch),
              absl::GetFlag(FLAGS_seq), absl::GetFlag(FLAGS_lr), absl::GetFlag(FLAGS_lora_lr),
              absl::GetFlag(FLAGS_prefix_lr));
  std::printf("%-14s %6s %12s %12s %9s  %s\n", "run", "steps", "loss_first", "loss_last",
              "wall_s", "final evaluation");
  for (const Variant& v : variants) {
    ASSIGN_OR_RETURN(StudyRun run, Train(v, out));
    const size_t tenth = std::max<size_t>(1, run.loss.size() / 10);
    std::printf("%-14s %6zu %12.4f %12.4f %9.1f  %s\n", v.name.c_str(), run.loss.size(),
                Mean(run.loss, 0, tenth), Mean(run.loss, run.loss.size() - tenth, run.loss.size()),
                run.seconds, run.evaluation.c_str());
    runs.push_back(std::move(run));
  }
  std::printf("(loss_first, loss_last: the mean step loss over the first and the last tenth of "
              "the forward passes)\n");
  RETURN_IF_ERROR(WriteOutputs(runs, out));
  std::printf("wrote %s/{zo_variants_study.csv, zo_variants_study.png, <run>/}\n", out.c_str());
  return absl::OkStatus();
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  zosched::ParseCommandLineOrExit(
      argc, argv,
      {"zo_variants_study", "",
       "MeZO with 1, 4 and 16 perturbation directions a step, and LoRA adapters over a frozen base,\n"
       "on opt-tiny on the CPU testbed at the same number of forward passes: the loss against the\n"
       "forwards, as a CSV and a plot."});
  absl::Status status = zosched::CheckFlagRange("forwards", absl::GetFlag(FLAGS_forwards), 32,
                                                100000000, "forward passes per run");
  if (status.ok()) {
    status = zosched::CheckFlagRange("window", absl::GetFlag(FLAGS_window), 1, 100000000,
                                     "forward passes");
  }
  if (status.ok()) status = zosched::Run();
  return zosched::ExitWith("zo_variants_study", status);
}
