// The first-order baselines, predicted from the cluster catalog alone for two
// published setups; writes tables (markdown + CSV), a Chrome trace and a
// timeline picture per case.
//
//   bazel run //experiments:first_order_study [-- --out_dir=out/first_order_study]
//
// A. The DDP/FSDP study on a 2x H100 SXM5 machine with NVLink
//    (https://daddyofadoggy.github.io/blog/posts/ddp_fsdp/): GPT-2 Large,
//    sequence 1024, micro-batch 8 per GPU, global batch 32, AdamW under
//    PyTorch AMP (FP32 weights and gradients: 16 bytes per parameter); one
//    GPU with 4 accumulation steps, DDP, FSDP SHARD_GRAD_OP and FSDP
//    FULL_SHARD with one unit per block. Per strategy: per-GPU memory, step
//    time and speed-up over one GPU, compute, communication, overlap,
//    exposed communication, idle time, compute efficiency, and the number
//    and size of the collectives of a step.
// B. Megatron-LM's recipe on H100 80GB (BF16 weights, FP32 gradients,
//    master weights and moments: 18 bytes per parameter), gpt2-xl, sequence
//    1024, attention that keeps its scores (Korthikanti et al.'s count):
//    per-GPU memory at DP = 1 and 4 with batch 1 per GPU and the step-time
//    cost of DP = 4's gradient all-reduce; ZeRO-2's per-GPU memory as DP goes
//    1, 2, 4, 8 with the global batch scaled with DP.
// Setup A is predicted kernel by kernel as PyTorch eager runs it (compute
// profile pytorch_first_order), with its roofline floor beside it (the same
// schedule with every compute op at its roofline); speed-ups are of the
// kernel-level steps. Setup B is predicted as Megatron-LM runs it (profile
// megatron_first_order: Transformer Engine's fused kernels), its floor
// beside it.
// Command line and exit status as every tool's (base/command_line.h): 0 on
// success; 2 for bad flags or an output directory that cannot be made; 1
// when a case fails or its files cannot be written.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/command_line.h"
#include "base/files.h"
#include "base/output_dir.h"
#include "base/status_macros.h"
#include "experiments/predicted_case.h"
#include "schedule/cluster_catalog.h"
#include "schedule/compute_profile_fit.h"
#include "schedule/strategy_grid.h"

ABSL_FLAG(std::string, out_dir, "",
          "where to write the tables, traces and pictures (default: out/first_order_study in "
          "the workspace)");

namespace zosched {
namespace {

struct Row {
  std::string setup, label;
  PredictedCase predicted;
  double speedup = 0;  // over the setup's one-GPU case, when it has one
};

LowerOptions Options(StrategyKind kind, int devices, int batch, int micro,
                     PrecisionRecipe precision, bool flash_attention) {
  LowerOptions o = GridLowerOptions({kind, /*pertp=*/1, devices});
  o.precision = precision;
  o.flash_attention = flash_attention;
  o.training.set_batch_size(batch);
  o.training.set_micro_batch_size(micro);
  o.training.set_seq_len(1024);
  return o;
}

// Device 0's collectives of the step: "N all-reduce (X GB), ...".
std::string CollectivesText(const Schedule& s) {
  std::map<std::string, std::pair<int, int64_t>> by_kind;
  for (const Op& op : s.ops()) {
    if (op.device() != 0 || !op.has_collective()) continue;
    auto& [count, bytes] = by_kind[CollectiveKind_Name(op.collective().kind())];
    ++count;
    bytes += op.collective().bytes();
  }
  if (by_kind.empty()) return "none";
  std::vector<std::string> parts;
  for (const auto& [kind, cb] : by_kind) {
    parts.push_back(absl::StrFormat("%d %s (%.2f GB)", cb.first, kind, cb.second / 1e9));
  }
  return absl::StrJoin(parts, ", ");
}

std::string Gb(int64_t bytes) { return absl::StrFormat("%.2f", bytes / 1e9); }

// The compute profile a row was predicted under: "pytorch_first_order".
std::string Profile(const Row& r) {
  return ComputeProfileFlagName(r.predicted.schedule.compute_profile());
}

class Study {
 public:
  explicit Study(std::string out_dir) : out_dir_(std::move(out_dir)) {}
  absl::Status Run();

 private:
  absl::StatusOr<Row> Predict(const std::string& setup, const std::string& label,
                              const std::string& model, const Cluster& cluster,
                              const LowerOptions& options);
  std::string out_dir_;
  std::vector<std::string> csv_ = {
      "setup,case,schedule,devices,model_states_GB,activations_GB,comm_buffers_GB,peak_GB,"
      "compute_profile,step_ms,roofline_step_ms,speedup,compute_ms,comm_ms,overlap_pct,"
      "exposed_comm_ms,idle_ms,compute_efficiency_pct,collectives"};
};

absl::StatusOr<Row> Study::Predict(const std::string& setup, const std::string& label,
                                   const std::string& model, const Cluster& cluster,
                                   const LowerOptions& options) {
  Row row{setup, label, {}, 0};
  ASSIGN_OR_RETURN(row.predicted, PredictCase(model, cluster, options));
  RETURN_IF_ERROR(
      WriteCaseArtifacts(row.predicted, out_dir_, Slug(setup + "_" + label), setup + ": " + label));
  return row;
}

absl::Status Study::Run() {
  ASSIGN_OR_RETURN(const Cluster h100_x2, LoadCluster("h100_sxm_x2"));
  ASSIGN_OR_RETURN(const Cluster hgx_h100, LoadCluster("hgx_h100"));
  std::vector<std::string> md = {
      "# First-order baselines (predicted)", "",
      "Every figure from the cluster catalog (clusters/*.pbtxt) and the model zoo; first-order "
      "schedules are simulated, never executed. Memory is device 0's plan: model states "
      "(weights, gradients, AdamW moments, master weights, gathered units), activations (saved "
      "for the backward, the residual stream, the logits), communication buffers (gradient "
      "buckets of ZeRO-2/3; DDP's buckets are views of the gradients). Step ms: predicted "
      "kernel by kernel under the compute profile named (pytorch_first_order: PyTorch eager "
      "training, autocast or FP32); floor ms: the same schedule with every compute op at its "
      "roofline. Compute, communication and idle times are of the kernel-level step.",
      ""};

  // A. GPT-2 Large, 2x H100 SXM5, AMP, micro-batch 8 per GPU, global batch 32.
  const std::string a = "A GPT-2 Large 2x H100 AMP";
  std::vector<Row> rows_a;
  const std::vector<std::tuple<std::string, StrategyKind, int>> cases_a = {
      {"1 GPU, 4 accumulation steps", SINGLE_DEVICE, 1},
      {"DDP", DDP, 2},
      {"FSDP SHARD_GRAD_OP (ZeRO-2)", ZERO_2, 2},
      {"FSDP FULL_SHARD (ZeRO-3)", ZERO_3, 2}};
  for (const auto& [label, kind, devices] : cases_a) {
    ASSIGN_OR_RETURN(Row row, Predict(a, label, "gpt2-large", h100_x2,
                                      Options(kind, devices, 32, 8, AMP_FP32_MASTER, true)));
    rows_a.push_back(std::move(row));
  }
  for (Row& r : rows_a) {
    r.speedup =
        static_cast<double>(rows_a[0].predicted.metrics.step_ns) / r.predicted.metrics.step_ns;
  }
  md.insert(md.end(),
            {"## A. GPT-2 Large on 2x H100 SXM5 (NVLink), PyTorch AMP (16 bytes per parameter)", "",
             "Sequence 1024, micro-batch 8 per GPU, global batch 32, AdamW; FSDP wraps each "
             "block. Memory in GB per GPU; times in ms per step; compute efficiency = compute / "
             "step.",
             "",
             "| strategy | model states | activations | comm buffers | peak | profile | step ms | "
             "floor ms | speed-up | compute ms | comm ms | overlap % | exposed ms | idle ms | "
             "compute eff. % | collectives per step (GPU 0) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"});
  for (const Row& r : rows_a) {
    const MemoryBreakdown mem = DeviceMemory(r.predicted.schedule, 0);
    const DeviceMetrics& d = r.predicted.metrics.devices[0];
    const double step_ms = r.predicted.metrics.step_ns / 1e6;
    md.push_back(absl::StrFormat(
        "| %s | %s | %s | %s | %s | %s | %.1f | %.1f | %.2fx | %.1f | %.1f | %.1f | %.2f | %.2f | "
        "%.1f | %s |",
        r.label, Gb(mem.model_states), Gb(mem.activations), Gb(mem.comm_buffers), Gb(mem.total()),
        Profile(r), step_ms, r.predicted.floor_ns / 1e6, r.speedup, d.compute_ns / 1e6,
        d.comm_ns / 1e6, 100 * d.overlap, d.exposed_comm_ns / 1e6, d.idle_ns / 1e6,
        100 * d.compute_efficiency, CollectivesText(r.predicted.schedule)));
  }

  // B. Megatron's recipe, gpt2-xl, H100 80GB, batch 1 per GPU.
  const std::string b = "B gpt2-xl H100 Megatron BF16";
  ASSIGN_OR_RETURN(const Row dp1, Predict(b, "DP 1", "gpt2-xl", hgx_h100,
                                          Options(SINGLE_DEVICE, 1, 1, 1, BF16_FP32_GRADS, false)));
  ASSIGN_OR_RETURN(const Row dp4, Predict(b, "DP 4", "gpt2-xl", hgx_h100,
                                          Options(DDP, 4, 4, 1, BF16_FP32_GRADS, false)));
  md.insert(
      md.end(),
      {"", "## B. gpt2-xl on H100 80GB, Megatron-LM's BF16 recipe (18 bytes per parameter)", "",
       "Sequence 1024, batch 1 per GPU, attention that keeps its scores. DP = 4 adds "
       "the gradient all-reduce of FP32 gradients. Predicted kernel by kernel as Megatron-LM "
       "runs it (Transformer Engine's fused kernels: profile megatron_first_order), the "
       "roofline floor beside it.",
       "",
       "| case | model states GB | activations GB | peak GB | profile | step ms | floor ms | "
       "comm ms | exposed ms | step-time cost of the all-reduce |",
       "|---|---|---|---|---|---|---|---|---|---|"});
  for (const Row* r : {&dp1, &dp4}) {
    const MemoryBreakdown mem = DeviceMemory(r->predicted.schedule, 0);
    const DeviceMetrics& d = r->predicted.metrics.devices[0];
    const int64_t cost = r->predicted.metrics.step_ns - dp1.predicted.metrics.step_ns;
    md.push_back(absl::StrFormat(
        "| %s | %s | %s | %s | %s | %.1f | %.1f | %.1f | %.2f | %s |", r->label,
        Gb(mem.model_states), Gb(mem.activations), Gb(mem.total()), Profile(*r),
        r->predicted.metrics.step_ns / 1e6, r->predicted.floor_ns / 1e6, d.comm_ns / 1e6,
        d.exposed_comm_ns / 1e6,
        r == &dp1 ? ""
                  : absl::StrFormat("+%.2f ms (%.1f %%)", cost / 1e6,
                                    100.0 * cost / dp1.predicted.metrics.step_ns)));
  }
  md.insert(md.end(), {"", "ZeRO-2 as DP grows, global batch = DP (1 per GPU):", "",
                       "| DP | model states GB | activations GB | peak GB | profile | step ms | "
                       "floor ms |",
                       "|---|---|---|---|---|---|---|"});
  std::vector<Row> rows_b = {dp1, dp4};
  for (int n : {1, 2, 4, 8}) {
    ASSIGN_OR_RETURN(Row z, Predict(b, absl::StrFormat("ZeRO-2 DP %d", n), "gpt2-xl", hgx_h100,
                                    Options(ZERO_2, n, n, 1, BF16_FP32_GRADS, false)));
    const MemoryBreakdown mem = DeviceMemory(z.predicted.schedule, 0);
    md.push_back(absl::StrFormat("| %d | %s | %s | %s | %s | %.1f | %.1f |", n,
                                 Gb(mem.model_states), Gb(mem.activations), Gb(mem.total()),
                                 Profile(z), z.predicted.metrics.step_ns / 1e6,
                                 z.predicted.floor_ns / 1e6));
    rows_b.push_back(std::move(z));
  }

  for (const std::vector<Row>* rows : {&rows_a, &rows_b}) {
    for (const Row& r : *rows) {
      const MemoryBreakdown mem = DeviceMemory(r.predicted.schedule, 0);
      const DeviceMetrics& d = r.predicted.metrics.devices[0];
      csv_.push_back(absl::StrFormat(
          "\"%s\",\"%s\",\"%s\",%d,%s,%s,%s,%s,%s,%.3f,%.3f,%.3f,%.3f,%.3f,%.1f,%.3f,%.3f,%.1f,"
          "\"%s\"",
          r.setup, r.label, r.predicted.schedule.name(), r.predicted.schedule.devices_size(),
          Gb(mem.model_states), Gb(mem.activations), Gb(mem.comm_buffers), Gb(mem.total()),
          Profile(r), r.predicted.metrics.step_ns / 1e6, r.predicted.floor_ns / 1e6, r.speedup,
          d.compute_ns / 1e6, d.comm_ns / 1e6, 100 * d.overlap, d.exposed_comm_ns / 1e6,
          d.idle_ns / 1e6, 100 * d.compute_efficiency, CollectivesText(r.predicted.schedule)));
    }
  }
  RETURN_IF_ERROR(WriteFile(out_dir_ + "/study.md", absl::StrJoin(md, "\n") + "\n"));
  RETURN_IF_ERROR(WriteFile(out_dir_ + "/study.csv", absl::StrJoin(csv_, "\n") + "\n"));
  std::printf("%s\n\nwrote %s/study.md, study.csv, traces/*.json (Perfetto), pictures/*.png\n",
              absl::StrJoin(md, "\n").c_str(), out_dir_.c_str());
  return absl::OkStatus();
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  zosched::ParseCommandLineOrExit(
      argc, argv,
      {"first_order_study", "",
       "The first-order baselines predicted from the cluster catalog for two published setups:\n"
       "DDP and FSDP of GPT-2 Large on 2 H100s, and Megatron-LM's recipe and ZeRO-2's memory for\n"
       "gpt2-xl on H100s; writes tables, traces and pictures."});
  zosched::Study study(zosched::OutputDir(absl::GetFlag(FLAGS_out_dir), "first_order_study"));
  return zosched::ExitWith("first_order_study", study.Run());
}
