// ZO with offloading against first-order training on the same machines,
// predicted from the cluster catalog: which strategies fit, and their
// throughput per step.
//
//   bazel run //experiments:zo_vs_first_order [-- --out_dir=out/zo_vs_first_order
//       --batch=16 --seq=512]
//
// For OPT-1.3B, 13B, 30B, 66B and 175B on a DGX A100, an HGX H100 and one
// H100 machine (clusters/h100_sxm_x1.pbtxt): MeZO and ZO2 on one GPU, every
// sliced DistZO2 grid P × D of 2 to 8 GPUs, and AdamW (PyTorch AMP, 16
// bytes per parameter) as DDP, ZeRO-1, ZeRO-2 and ZeRO-3 on all the
// machine's GPUs (one GPU with accumulation on the one-GPU machine), each
// with the fastest micro-batch and activation recomputation setting that
// fits. Writes every configuration tried (CSV), the best of each strategy
// (markdown) and a tokens/s chart per machine (PNG).
//
// Both sides are predicted kernel by kernel, as their implementations run:
// ZO as zosched's CUDA backend (compute profile zosched_cuda), AdamW as
// PyTorch eager training under autocast (pytorch_first_order); each with its
// roofline floor beside it (the same schedule with every compute op at its
// roofline). The fastest configuration is the fastest kernel-level step. No
// kernel-level profile runs activation recomputation: those configurations
// are predicted at the roofline (in the CSV), and one is a strategy's best
// only when nothing else of it fits (its profile, roofline, then says so).
//
// ZO needs many more steps than first-order training to reach the same loss
// (MeZO trains for 20,000 steps and more): these are tokens per second of a
// step, not time to accuracy.
// Command line and exit status as every tool's (base/command_line.h): 0 on
// success; 2 for bad flags or an output directory that cannot be made; 1
// when a configuration fails otherwise or the files cannot be written.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/command_line.h"
#include "base/files.h"
#include "base/output_dir.h"
#include "base/status_macros.h"
#include "experiments/gnuplot.h"
#include "experiments/predicted_case.h"
#include "schedule/cluster_catalog.h"
#include "schedule/compute_profile_fit.h"
#include "schedule/training_settings.h"

ABSL_FLAG(std::string, out_dir, "",
          "where to write the tables and charts (default: out/zo_vs_first_order in the "
          "workspace)");
ABSL_FLAG(int32_t, batch, 16, "examples per step, for every strategy");
ABSL_FLAG(int32_t, seq, 512, "sequence length");

namespace zosched {
namespace {

const std::vector<std::string> kModels = {"opt-1.3b", "opt-13b", "opt-30b", "opt-66b", "opt-175b"};
const std::vector<std::string> kClusters = {"dgx_a100", "hgx_h100", "h100_sxm_x1"};
// Strategy families, in table and chart order.
const std::vector<std::string> kFamilies = {"MeZO", "ZO2",    "DistZO2", "AdamW 1 GPU",
                                            "DDP",  "ZeRO-1", "ZeRO-2",  "ZeRO-3"};

// One configuration tried: fits (case set) or not (reason).
struct Config {
  std::string model, cluster, family, knobs;
  bool fits = false;
  std::string reason;
  std::string profile;  // the compute profile it was predicted under (fits)
  double step_ms = 0;   // kernel-level, under `profile`
  double floor_ms = 0;  // every compute op at its roofline
  double tokens_per_s = 0, gpu_gb = 0, host_gb = 0;
  int gpus = 0;
};

// "gpu0 over by 270.1 GB" from a memory plan's refusal; else the message.
std::string Reason(const absl::Status& status) {
  const std::string message(status.message());
  const size_t plan = message.find(": memory plan needs");
  const size_t over = message.find("over by ");
  if (status.code() != absl::StatusCode::kResourceExhausted || plan == std::string::npos ||
      over == std::string::npos) {
    return message;
  }
  const size_t end = message.find(" (", over);
  return message.substr(0, plan) + " " + message.substr(over, end - over);
}

LowerOptions Options(StrategyKind kind, int dp = 1) {
  LowerOptions o;
  o.strategy = kind;
  o.dp = dp;
  o.training = DefaultTrainingSettings();
  o.training.set_batch_size(absl::GetFlag(FLAGS_batch));
  o.training.set_seq_len(absl::GetFlag(FLAGS_seq));
  return o;
}

Config Try(const std::string& model, const Cluster& cluster, const std::string& family,
           const std::string& knobs, const LowerOptions& options) {
  Config c{model, cluster.name(), family, knobs};
  absl::StatusOr<PredictedCase> p = PredictCase(model, cluster, options);
  if (!p.ok()) {
    c.reason = Reason(p.status());
    return c;
  }
  c.fits = true;
  c.profile = ComputeProfileFlagName(p->schedule.compute_profile());
  c.step_ms = p->metrics.step_ns / 1e6;
  c.floor_ms = p->floor_ns / 1e6;
  c.tokens_per_s = p->metrics.tokens_per_s;
  c.gpus = p->schedule.devices_size();
  for (int d = 0; d < c.gpus; ++d) {
    c.gpu_gb = std::max(c.gpu_gb, DeviceMemory(p->schedule, d).total() / 1e9);
  }
  c.host_gb = HostMemory(p->schedule) / 1e9;
  return c;
}

// Every configuration of every family for `model` on `cluster`.
std::vector<Config> Sweep(const std::string& model, const Cluster& cluster) {
  const int gpus = cluster.devices_size();
  const int batch = absl::GetFlag(FLAGS_batch);
  std::vector<Config> out = {Try(model, cluster, "MeZO", "1 GPU", Options(MEZO)),
                             Try(model, cluster, "ZO2", "1 GPU", Options(ZO2))};
  for (int p : {1, 2}) {
    for (int d = 1; p * d <= gpus; d *= 2) {
      if (p * d < 2 || batch % d != 0) continue;
      LowerOptions o = Options(DISTZO2, d);
      o.pertp = p;
      out.push_back(Try(model, cluster, "DistZO2", absl::StrFormat("P%dxD%d sliced", p, d), o));
    }
  }
  const std::vector<std::pair<std::string, StrategyKind>> first_order =
      gpus == 1 ? std::vector<std::pair<std::string, StrategyKind>>{{"AdamW 1 GPU", SINGLE_DEVICE}}
                : std::vector<std::pair<std::string, StrategyKind>>{
                      {"DDP", DDP}, {"ZeRO-1", ZERO_1}, {"ZeRO-2", ZERO_2}, {"ZeRO-3", ZERO_3}};
  for (const auto& [family, kind] : first_order) {
    if (batch % gpus != 0) continue;
    for (int micro = batch / gpus; micro >= 1; micro /= 2) {
      if ((batch / gpus) % micro != 0) continue;
      for (bool recompute : {false, true}) {
        LowerOptions o = Options(kind, gpus);
        o.training.set_micro_batch_size(micro);
        o.recompute = recompute;
        out.push_back(Try(model, cluster, family,
                          absl::StrFormat("%d GPUs, micro-batch %d%s", gpus, micro,
                                          recompute ? ", recompute" : ""),
                          o));
      }
    }
  }
  return out;
}

// The fastest fitting configuration of `family` predicted kernel by kernel;
// when none is, the fastest fitting one at the roofline (a floor is no
// match for a kernel-level step); when none fits, the last refused (the most
// frugal: the smallest micro-batch, recomputing).
const Config* Best(const std::vector<Config>& configs, const std::string& family) {
  auto rank = [](const Config& c) { return c.fits ? (c.profile != "roofline" ? 2 : 1) : 0; };
  const Config* best = nullptr;
  for (const Config& c : configs) {
    if (c.family != family) continue;
    if (best == nullptr || rank(c) > rank(*best) ||
        (rank(c) == rank(*best) && (!c.fits || c.step_ms < best->step_ms))) {
      best = &c;
    }
  }
  return best;
}

absl::Status Chart(const std::string& dir, const std::string& cluster,
                   const std::map<std::string, std::vector<Config>>& by_model) {
  const std::string base = dir + "/" + cluster;
  std::vector<std::string> dat = {"# model " + absl::StrJoin(kFamilies, " | ") +
                                  " (tokens/s of the best configuration; - does not fit)"};
  for (const std::string& model : kModels) {
    std::string line = model;
    for (const std::string& family : kFamilies) {
      const Config* c = Best(by_model.at(model), family);
      absl::StrAppend(
          &line, " ",
          c != nullptr && c->fits ? absl::StrFormat("%.1f", c->tokens_per_s) : std::string("-"));
    }
    dat.push_back(line);
  }
  RETURN_IF_ERROR(WriteFile(base + ".dat", absl::StrJoin(dat, "\n") + "\n"));
  std::string gp = absl::StrFormat(
      "# Redraw with `gnuplot %s.gp` from any directory.\n%s"
      "set terminal pngcairo size 1400,700 font 'sans,10' noenhanced\n"
      "set output here . '%s.png'\n"
      "set title %s\n"
      "set style data histograms\nset style histogram clustered gap 1\n"
      "set style fill solid 0.9 border -1\nset boxwidth 0.9\n"
      "set datafile missing '-'\nset logscale y\nset grid ytics\n"
      "set ylabel 'tokens/s per step (log)'\nset key outside right\n"
      "plot ",
      cluster, kGnuplotHere, cluster,
      GnuplotString(absl::StrFormat("ZO vs first-order on %s: batch %d, sequence %d (predicted "
                                    "kernel by kernel; no bar: does not fit)",
                                    cluster, absl::GetFlag(FLAGS_batch),
                                    absl::GetFlag(FLAGS_seq))));
  for (size_t f = 0; f < kFamilies.size(); ++f) {
    absl::StrAppend(&gp, f > 0 ? ", " : "", "here . '", cluster, ".dat' using ", f + 2,
                    f == 0 ? ":xtic(1)" : "", " title ", GnuplotString(kFamilies[f]));
  }
  RETURN_IF_ERROR(WriteFile(base + ".gp", gp + "\n"));
  return RunGnuplot(base + ".gp", base + ".png");
}

absl::Status Run(const std::string& dir) {
  RETURN_IF_ERROR(MakeDirectories(dir));
  std::vector<std::string> csv = {
      "model,cluster,strategy,knobs,fits,reason,gpus,compute_profile,step_ms,roofline_step_ms,"
      "tokens_per_s,gpu_memory_GB,host_memory_GB"};
  std::vector<std::string> md = {
      "# ZO with offloading vs first-order training (predicted)",
      "",
      absl::StrFormat(
          "Batch %d, sequence %d, for every strategy; each strategy's fastest configuration "
          "that fits (first-order: the micro-batch; DistZO2: the P x D grid). "
          "AdamW under PyTorch AMP holds 16 bytes per parameter on the GPUs; ZO keeps the "
          "weights (MeZO) or streams them from host memory (ZO2, DistZO2). ZO needs many more "
          "steps than first-order training to reach the same loss, so compare throughput per "
          "step, not time to accuracy. Step ms: predicted kernel by kernel under the compute "
          "profile named (zosched_cuda: zosched's CUDA kernels; pytorch_first_order: PyTorch "
          "eager training under autocast); floor ms: the same schedule with every compute op "
          "at its roofline. No kernel-level profile runs activation recomputation, so "
          "recomputing configurations are predicted at the roofline (configurations.csv) and "
          "chosen only where nothing else fits.",
          absl::GetFlag(FLAGS_batch), absl::GetFlag(FLAGS_seq)),
      "",
      "| model | machine | strategy | best configuration | profile | step ms | floor ms | "
      "tokens/s | GPU GB | host GB |",
      "|---|---|---|---|---|---|---|---|---|---|"};
  for (const std::string& cluster_name : kClusters) {
    ASSIGN_OR_RETURN(const Cluster cluster, LoadCluster(cluster_name));
    std::map<std::string, std::vector<Config>> by_model;
    for (const std::string& model : kModels) {
      std::vector<Config> configs = Sweep(model, cluster);
      for (const Config& c : configs) {
        auto ms = [&c](double v) { return c.fits ? absl::StrFormat("%.3f", v) : std::string(); };
        csv.push_back(absl::StrFormat("%s,%s,%s,\"%s\",%s,\"%s\",%d,%s,%s,%s,%.1f,%.2f,%.2f",
                                      c.model, c.cluster, c.family, c.knobs,
                                      c.fits ? "yes" : "no", c.reason, c.gpus, c.profile,
                                      ms(c.step_ms), ms(c.floor_ms), c.tokens_per_s, c.gpu_gb,
                                      c.host_gb));
      }
      for (const std::string& family : kFamilies) {
        const Config* c = Best(configs, family);
        if (c == nullptr) continue;
        md.push_back(
            c->fits
                ? absl::StrFormat("| %s | %s | %s | %s | %s | %.1f | %.1f | %.0f | %.1f | %.1f |",
                                  model, cluster_name, family, c->knobs, c->profile, c->step_ms,
                                  c->floor_ms, c->tokens_per_s, c->gpu_gb, c->host_gb)
                : absl::StrFormat("| %s | %s | %s | does not fit: %s | | | | | | |", model,
                                  cluster_name, family, c->reason));
      }
      by_model[model] = std::move(configs);
    }
    RETURN_IF_ERROR(Chart(dir, cluster_name, by_model));
  }
  RETURN_IF_ERROR(WriteFile(dir + "/configurations.csv", absl::StrJoin(csv, "\n") + "\n"));
  RETURN_IF_ERROR(WriteFile(dir + "/best.md", absl::StrJoin(md, "\n") + "\n"));
  std::printf("%s\n\nwrote %s/best.md, configurations.csv (%zu configurations), %s.png\n",
              absl::StrJoin(md, "\n").c_str(), dir.c_str(), csv.size() - 1,
              absl::StrJoin(kClusters, ".png, ").c_str());
  return absl::OkStatus();
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  zosched::ParseCommandLineOrExit(
      argc, argv,
      {"zo_vs_first_order", "",
       "ZO with offloading against first-order training on the same machines, predicted from\n"
       "the cluster catalog: which strategies fit each OPT model, and their tokens per second\n"
       "of a step; writes every configuration (CSV), the best per strategy and charts."});
  absl::Status status =
      zosched::CheckStudyBatchAndSeq(absl::GetFlag(FLAGS_batch), absl::GetFlag(FLAGS_seq));
  if (status.ok()) {
    status = zosched::Run(zosched::OutputDir(absl::GetFlag(FLAGS_out_dir), "zo_vs_first_order"));
  }
  return zosched::ExitWith("zo_vs_first_order", status);
}
