// The runtime's speed on this machine, measured (warm-up, repeats, medians):
//
//   bazel run //runtime:runtime_benchmark [-- --model=opt-125m --examples=16
//       --seq=128 --steps=8]
//
// 1. The forward pass: BlockForward's GFLOP/s against the peak of the GEMM
//    kernel it runs on (runtime/nn/gemm.h) measured in the same run, single
//    threaded (target >= 70%):
//      block GFLOP/s = BlockForwardFlopsPerToken(spec, seq) · examples · seq
//                      / median time of one BlockForward / 1e9
//      GEMM GFLOP/s  = 2 · T · h · f / median time of Y[T, f] = X[T, h] · W[f, h]ᵀ
//                      (the block's fc1 shape, T = examples · seq)
//    Attention's FLOPs count the full seq × seq score matrix (accounting.h).
// 2. Overlap: a ZO2 run of --steps steps on the CPU testbed (local_cpu, whose
//    emulated host links make every block's transfer shorter than its
//    compute), then, from the measured Timeline, per step after the first:
//      step time / compute-only time, compute-only = |union of the step's
//      compute op intervals| (the step if every transfer were hidden)
//    reported as the median ratio (target <= 1.10) with min and max.
// Command line and exit status as every tool's (base/command_line.h): 0
// when both ran; 2 for bad flags, a model the CPU runtime does not run, a
// ZO2 step that does not fit, or more than one process; 1 when a run fails.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "base/command_line.h"
#include "base/flag_checks.h"
#include "base/proto_file.h"
#include "base/status_macros.h"
#include "base/temporary_directory.h"
#include "models/accounting.h"
#include "models/model_zoo.h"
#include "runtime/mpi_world.h"
#include "runtime/nn/gemm.h"
#include "runtime/nn/decoder_forward.h"
#include "runtime/train_schedule.h"
#include "runtime/trainer.h"
#include "schedule/timeline_intervals.h"

ABSL_FLAG(std::string, model, "opt-125m", "zoo model for both measurements");
ABSL_FLAG(int32_t, examples, 16, "forward: examples per micro-batch");
ABSL_FLAG(int32_t, seq, 128, "forward: sequence length");
ABSL_FLAG(int32_t, steps, 8, "overlap: ZO2 steps to run (the first is warm-up)");
ABSL_FLAG(int32_t, step_batch, 8, "overlap: examples per step");
ABSL_FLAG(int32_t, step_seq, 32, "overlap: sequence length");

namespace zosched {
namespace {

constexpr int kWarmup = 2;
constexpr int kRepeats = 7;

template <typename F>
double MedianSeconds(F&& f) {
  for (int i = 0; i < kWarmup; ++i) f();
  std::vector<double> times;
  for (int i = 0; i < kRepeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void MeasureForward(const ModelSpec* spec, const std::string& name, int examples, int seq) {
  const int64_t h = spec->hidden_size(), f = spec->ffn_size();
  const int64_t T = static_cast<int64_t>(examples) * seq;

  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> block(BlockParams(*spec));
  for (float& x : block) x = normal(rng);
  std::vector<float> hidden(T * h),
      workspace(BlockWorkspaceFloats(*spec, examples, seq));
  for (float& x : hidden) x = normal(rng);
  std::vector<int32_t> lengths(examples, seq);

  const double block_s = MedianSeconds([&] {
    BlockForward(*spec, block.data(), lengths.data(), examples, seq,
                 hidden.data(), workspace.data());
  });
  const double block_flops =
      static_cast<double>(BlockForwardFlopsPerToken(*spec, seq)) * T;

  std::vector<float> w(f * h), y(T * f);
  for (float& x : w) x = normal(rng);
  const double gemm_s = MedianSeconds([&] {
    std::fill(y.begin(), y.end(), 0.0f);
    GemmAcc(kRhsTransposed, T, f, h, hidden.data(), h, w.data(), h, y.data(), f);
  });
  const double gemm_flops = 2.0 * T * h * f;

  const double block_gflops = block_flops / block_s / 1e9;
  const double gemm_gflops = gemm_flops / gemm_s / 1e9;
  std::printf("model %s, %d examples x seq %d (%lld tokens), GEMM kernel %s\n",
              name.c_str(), examples, seq, static_cast<long long>(T), GemmKernelName());
  std::printf("BlockForward: %.3f ms, %.1f GFLOP/s\n", block_s * 1e3,
              block_gflops);
  std::printf(
      "GEMM [%lld x %lld] x [%lld x %lld]: %.3f ms, %.1f GFLOP/s\n",
      static_cast<long long>(T), static_cast<long long>(h),
      static_cast<long long>(h), static_cast<long long>(f), gemm_s * 1e3,
      gemm_gflops);
  std::printf("forward: BlockForward reaches %.0f%% of the GEMM's peak (target >= 70%%)\n",
              100.0 * block_gflops / gemm_gflops);
}

absl::Status MeasureOverlap(const std::string& model) {
  TrainOptions o;
  o.model = model;
  o.lowering.strategy = ZO2;
  o.lowering.training = DefaultTrainingSettings();
  o.lowering.training.set_batch_size(absl::GetFlag(FLAGS_step_batch));
  o.lowering.training.set_seq_len(absl::GetFlag(FLAGS_step_seq));
  o.lowering.training.set_learning_rate(1e-6);
  o.lowering.training.set_compute_dtype(FP32);
  o.lowering.training.set_host_dtype(FP32);
  o.steps = absl::GetFlag(FLAGS_steps);
  o.eval_examples = 16;
  ASSIGN_OR_RETURN(o.out_dir,
                   MakeTemporaryDirectory("zosched_runtime_benchmark", "the benchmark's run"));
  std::printf("\noverlap: ZO2 %s on local_cpu, %d steps of %d x %d tokens (outputs in %s)\n",
              model.c_str(), o.steps, absl::GetFlag(FLAGS_step_batch),
              absl::GetFlag(FLAGS_step_seq), o.out_dir.c_str());
  o.checkpoint_every = 0;  // the benchmark times steps
  ASSIGN_OR_RETURN(const Schedule prepared, PrepareSchedule(o));
  // One rank: there is no other rank to wait for, so the limit never binds.
  const std::chrono::seconds wait_limit(600);
  if (absl::Status s = Train(o, prepared, wait_limit, 0, 1).status(); !s.ok()) return s;
  Timeline timeline;
  if (absl::Status s = ReadProtoFile(o.out_dir + "/timeline.pb", &timeline); !s.ok()) return s;
  Schedule schedule;
  if (absl::Status s = ReadProtoFile(o.out_dir + "/schedule.pb", &schedule); !s.ok()) return s;
  const auto ops = OpsById(schedule);
  std::vector<double> ratios;
  std::vector<int64_t> step_ns, compute_ns;
  for (const StepInterval& step : timeline.steps()) {
    if (step.step() == 0) continue;  // warm-up
    std::vector<Interval> compute;
    for (const OpInterval& i : timeline.ops()) {
      if (i.step() == step.step() && ops.at(i.op_id())->has_compute()) {
        compute.push_back({i.start_ns(), i.end_ns()});
      }
    }
    step_ns.push_back(step.end_ns() - step.start_ns());
    compute_ns.push_back(UnionNs(compute));
    ratios.push_back(static_cast<double>(step_ns.back()) / compute_ns.back());
  }
  std::vector<double> sorted = ratios;
  std::sort(sorted.begin(), sorted.end());
  std::sort(step_ns.begin(), step_ns.end());
  std::sort(compute_ns.begin(), compute_ns.end());
  std::printf("overlap: step %.1f ms, compute-only %.1f ms (medians over %zu steps)\n",
              step_ns[step_ns.size() / 2] / 1e6, compute_ns[compute_ns.size() / 2] / 1e6,
              ratios.size());
  std::printf("overlap: step / compute-only = %.3f (min %.3f, max %.3f; target <= 1.10)\n",
              sorted[sorted.size() / 2], sorted.front(), sorted.back());
  return absl::OkStatus();
}

// The model is one the CPU runtime runs, and the shapes fit it.
absl::Status CheckFlags(const ModelSpec& spec) {
  RETURN_IF_ERROR(CheckRuntimeSupports(spec));
  const int64_t positions = spec.max_positions();
  RETURN_IF_ERROR(CheckFlagRange("examples", absl::GetFlag(FLAGS_examples), 1, 4096, "examples"));
  RETURN_IF_ERROR(CheckFlagRange("seq", absl::GetFlag(FLAGS_seq), 1, positions,
                                 "tokens, up to the model's max_positions"));
  RETURN_IF_ERROR(CheckFlagRange("steps", absl::GetFlag(FLAGS_steps), 2, 100000,
                                 "steps, the first a warm-up"));
  RETURN_IF_ERROR(
      CheckFlagRange("step_batch", absl::GetFlag(FLAGS_step_batch), 1, 4096, "examples"));
  return CheckFlagRange("step_seq", absl::GetFlag(FLAGS_step_seq), 1, positions,
                        "tokens, up to the model's max_positions");
}

int Main(int argc, char** argv) {
  constexpr char kTool[] = "runtime_benchmark";
  ParseCommandLineOrExit(
      argc, argv,
      {kTool, "",
       "Measures the CPU runtime: BlockForward's GFLOP/s against its GEMM kernel's peak, and\n"
       "how much of a ZO2 step's transfers its compute hides (one process; no mpirun)."});
  int rank = 0, world = 1;
  if (absl::Status s = InitMpi(&argc, &argv, &rank, &world); !s.ok()) return ReportError(kTool, s);
  if (world != 1) {
    return ReportError(kTool, absl::InvalidArgumentError(absl::StrFormat(
                                  "started as %d processes: run it as one (no mpirun)", world)));
  }
  const std::string name = absl::GetFlag(FLAGS_model);
  absl::StatusOr<ModelSpec> spec = LoadModelSpec(name);
  if (!spec.ok()) return ReportError(kTool, spec.status());
  if (absl::Status s = CheckFlags(*spec); !s.ok()) return ReportError(kTool, s);
  MeasureForward(&*spec, name, absl::GetFlag(FLAGS_examples), absl::GetFlag(FLAGS_seq));
  if (absl::Status s = MeasureOverlap(name); !s.ok()) return ReportError(kTool, s);
  MPI_Finalize();
  return 0;
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) { return zosched::Main(argc, argv); }
