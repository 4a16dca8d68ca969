// The DistZO2 study, predicted from the catalog's sourced figures alone:
// lowers and simulates the cases below and writes a summary table
// (markdown + CSV), a Chrome trace and a timeline picture per case.
//
//   bazel run //experiments:distzo2_study [-- --out_dir=out/distzo2_study
//       --batch=16 --seq=256]
//
// Cases:
//   1. OPT-1.3B, 4 GPUs of a DGX A100, 2D (P=2 × D=2): sliced vs naive.
//   2. OPT-1.3B, 2 H100 SXM, NVLink vs PCIe-only peer links (the same node
//      with its NVLink domain removed), for PertP (P=2) and DDP (D=2).
//   3. PertP vs DDP on 2 GPUs with NVLink, the same examples per device:
//      overlap and exposed communication.
//   4. OPT-1.3B with slicing on 2 vs 4 vs 8 GPUs of a DGX A100 (DDP), weak
//      and strong scaling: host-link and peer bytes per device, overlap.
//   5. OPT-175B: ZO2 on one GPU vs the best DistZO2 grid on all 8 GPUs of a
//      DGX A100 and of an HGX H100: step time, tokens/s, speedup, binding.
// Every case is predicted kernel by kernel under zosched's own CUDA
// kernels (compute profile zosched_cuda), with its roofline floor beside it
// (the same schedule with every compute op at its roofline); speed-ups and
// the best grid are of the kernel-level steps.
// Per-device columns report the device with the most exposed communication.
// The default sequence length, 256, is a prompt-classification regime
// (MeZO's SST-2 prompts fit), where transfers matter; at 2048 every case is
// compute-bound.
// Command line and exit status as every tool's (base/command_line.h): 0 on
// success; 2 for bad flags, an output directory that cannot be made, or a
// case that does not fit at the --batch and --seq given; 1 when a case
// fails otherwise or its files cannot be written.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/command_line.h"
#include "base/files.h"
#include "base/output_dir.h"
#include "base/status_macros.h"
#include "base/user_path.h"
#include "experiments/predicted_case.h"
#include "schedule/cluster_catalog.h"
#include "schedule/compute_profile_fit.h"
#include "schedule/schedule_stats.h"
#include "schedule/strategy_grid.h"

ABSL_FLAG(std::string, out_dir, "",
          "where to write the table, traces and pictures (default: out/distzo2_study "
          "in the workspace)");
ABSL_FLAG(int32_t, batch, 16, "examples per step");
ABSL_FLAG(int32_t, seq, 256, "sequence length");

namespace zosched {
namespace {

struct Row {
  std::string section;
  std::string label;
  PredictedCase predicted;
  const Schedule& schedule() const { return predicted.schedule; }
  const StepMetrics& metrics() const { return predicted.metrics; }
  int worst = 0;        // the device with the most exposed communication
  DeviceStats traffic;  // of that device
  double speedup = 0;                    // over the section's baseline, if any
};

class Study {
 public:
  explicit Study(std::string out_dir) : out_dir_(std::move(out_dir)) {}

  absl::Status Run();

 private:
  absl::StatusOr<Row> Predict(const std::string& section, const std::string& label,
                              const std::string& model, const Cluster& cluster,
                              const LowerOptions& options);
  absl::Status Write(const std::vector<Row>& rows);

  std::string out_dir_;
};

// `batch` 0: the --batch flag.
LowerOptions Options(StrategyKind strategy, int pertp = 1, int dp = 1, bool slicing = true,
                     int batch = 0) {
  LowerOptions o = GridLowerOptions({strategy, pertp, dp, slicing});
  o.training.set_batch_size(batch > 0 ? batch : absl::GetFlag(FLAGS_batch));
  o.training.set_seq_len(absl::GetFlag(FLAGS_seq));
  return o;
}

// `cluster` with its NVLink domain removed: peers talk over PCIe.
Cluster WithoutNvlink(Cluster cluster) {
  cluster.set_name(cluster.name() + "_pcie_only");
  cluster.set_description(cluster.description() + " (NVLink removed: PCIe peer links only)");
  cluster.clear_peer_domains();
  cluster.set_pcie_peer_access(true);
  for (Device& d : *cluster.mutable_devices()) d.clear_peer_domain();
  return cluster;
}

absl::StatusOr<Row> Study::Predict(const std::string& section, const std::string& label,
                                   const std::string& model_name, const Cluster& cluster,
                                   const LowerOptions& options) {
  Row row;
  row.section = section;
  row.label = label;
  ASSIGN_OR_RETURN(row.predicted, PredictCase(model_name, cluster, options));
  const StepMetrics& m = row.metrics();
  for (const DeviceMetrics& d : m.devices) {
    if (d.exposed_comm_ns > m.devices[row.worst].exposed_comm_ns) row.worst = d.device;
  }
  row.traffic = ComputeDeviceStats(row.schedule())[row.worst];
  return row;
}

absl::Status Study::Run() {
  ASSIGN_OR_RETURN(Cluster dgx_a100, LoadCluster("dgx_a100"));
  ASSIGN_OR_RETURN(Cluster hgx_h100, LoadCluster("hgx_h100"));
  ASSIGN_OR_RETURN(Cluster h100_x2, LoadCluster("h100_sxm_x2"));
  const Cluster h100_x2_pcie = WithoutNvlink(h100_x2);
  std::vector<Row> rows;
  auto add = [&rows](absl::StatusOr<Row> row) -> absl::Status {
    RETURN_IF_ERROR(row.status());
    rows.push_back(*std::move(row));
    return absl::OkStatus();
  };

  const int batch = absl::GetFlag(FLAGS_batch);
  const std::string s1 = "1 OPT-1.3B DGX A100 4 GPUs P2xD2";
  RETURN_IF_ERROR(add(Predict(s1, "sliced", "opt-1.3b", dgx_a100, Options(DISTZO2, 2, 2, true))));
  RETURN_IF_ERROR(add(Predict(s1, "naive", "opt-1.3b", dgx_a100, Options(DISTZO2, 2, 2, false))));

  const std::string s2 = "2 OPT-1.3B 2x H100 NVLink vs PCIe";
  RETURN_IF_ERROR(add(Predict(s2, "PertP NVLink", "opt-1.3b", h100_x2, Options(DISTZO2, 2, 1))));
  RETURN_IF_ERROR(
      add(Predict(s2, "PertP PCIe", "opt-1.3b", h100_x2_pcie, Options(DISTZO2, 2, 1))));
  RETURN_IF_ERROR(add(Predict(s2, "DDP NVLink", "opt-1.3b", h100_x2, Options(DISTZO2, 1, 2))));
  RETURN_IF_ERROR(add(Predict(s2, "DDP PCIe", "opt-1.3b", h100_x2_pcie, Options(DISTZO2, 1, 2))));

  // The same examples per device: PertP runs one forward of `batch` examples
  // per block, DDP two (one per sign), so DDP's global batch is twice as big.
  const std::string s3 = "3 OPT-1.3B 2x H100 NVLink PertP vs DDP same examples per device";
  RETURN_IF_ERROR(add(Predict(s3, absl::StrFormat("PertP batch %d", batch), "opt-1.3b", h100_x2,
                              Options(DISTZO2, 2, 1, true, batch))));
  RETURN_IF_ERROR(add(Predict(s3, absl::StrFormat("DDP batch %d", 2 * batch), "opt-1.3b",
                              h100_x2, Options(DISTZO2, 1, 2, true, 2 * batch))));

  // Weak scaling (the same examples per device: finer slices, same compute)
  // and strong scaling (one global batch split further).
  const std::string s4 = "4 OPT-1.3B DGX A100 sliced DDP 2 vs 4 vs 8 GPUs";
  for (int n : {2, 4, 8}) {
    RETURN_IF_ERROR(add(Predict(s4, absl::StrFormat("%d GPUs weak batch %d", n, batch / 2 * n),
                                "opt-1.3b", dgx_a100,
                                Options(DISTZO2, 1, n, true, batch / 2 * n))));
  }
  for (int n : {2, 4, 8}) {
    RETURN_IF_ERROR(add(Predict(s4, absl::StrFormat("%d GPUs strong batch %d", n, batch),
                                "opt-1.3b", dgx_a100, Options(DISTZO2, 1, n))));
  }

  const std::string s5 = "5 OPT-175B ZO2 1 GPU vs best DistZO2 8 GPUs";
  for (const Cluster* cluster : {&dgx_a100, &hgx_h100}) {
    ASSIGN_OR_RETURN(Row zo2, Predict(s5, cluster->name() + " ZO2 1 GPU", "opt-175b",
                                      *cluster, Options(ZO2)));
    // The best sliced grid over all 8 GPUs (the naive scheme's 8 host copies
    // of OPT-175B do not fit host memory).
    absl::StatusOr<Row> best = absl::NotFoundError("no grid");
    for (int p : {1, 2}) {
      absl::StatusOr<Row> grid =
          Predict(s5, absl::StrFormat("%s DistZO2 P%dxD%d sliced", cluster->name(), p, 8 / p),
                  "opt-175b", *cluster, Options(DISTZO2, p, 8 / p));
      RETURN_IF_ERROR(grid.status());
      if (!best.ok() || grid->metrics().step_ns < best->metrics().step_ns) best = std::move(grid);
    }
    best->speedup = static_cast<double>(zo2.metrics().step_ns) / best->metrics().step_ns;
    rows.push_back(std::move(zo2));
    rows.push_back(*std::move(best));
  }
  return Write(rows);
}

absl::Status Study::Write(const std::vector<Row>& rows) {
  const std::string header =
      "case,schedule,compute_profile,step_ms,roofline_step_ms,tokens_per_s,overlap_pct,"
      "exposed_comm_ms,idle_ms,compute_ms,host_link_ms,peer_link_ms,binding,"
      "host_link_GB_per_device,peer_GB_per_device,memory_GB,speedup";
  std::vector<std::string> csv = {header};
  std::vector<std::string> md = {
      "# DistZO2 study (predicted)",
      "",
      absl::StrFormat("Batch %d, sequence length %d; every figure from the cluster catalog "
                      "(clusters/*.pbtxt). Step ms: predicted kernel by kernel under the "
                      "compute profile named (zosched_cuda: zosched's CUDA kernels); floor ms: "
                      "the same schedule with every compute op at its roofline. Per-device "
                      "columns: the device with the most exposed communication. Host link GB: "
                      "host<->device bytes per step, both directions. Peer GB: bytes received "
                      "through collectives.",
                      absl::GetFlag(FLAGS_batch), absl::GetFlag(FLAGS_seq)),
      "",
      "| case | schedule | profile | step ms | floor ms | tokens/s | overlap % | exposed comm "
      "ms | binding | host link GB/dev | peer GB/dev | speedup |",
      "|---|---|---|---|---|---|---|---|---|---|---|---|"};
  for (const Row& r : rows) {
    const StepMetrics& metrics = r.metrics();
    const DeviceMetrics& d = metrics.devices[r.worst];
    const double host_gb = (r.traffic.h2d_bytes + r.traffic.d2h_bytes) / 1e9;
    const double peer_gb = r.traffic.collective_bytes / 1e9;
    const std::string speedup = r.speedup > 0 ? absl::StrFormat("%.2f", r.speedup) : "";
    const std::string profile = ComputeProfileFlagName(r.schedule().compute_profile());
    const double floor_ms = r.predicted.floor_ns / 1e6;
    csv.push_back(absl::StrFormat(
        "\"%s\",\"%s\",%s,%.3f,%.3f,%.0f,%.1f,%.3f,%.3f,%.3f,%.3f,%.3f,%s,%.3f,%.3f,%.3f,%s",
        r.section, r.label, profile, metrics.step_ns / 1e6, floor_ms, metrics.tokens_per_s,
        100 * d.overlap, d.exposed_comm_ns / 1e6, d.idle_ns / 1e6, d.compute_ns / 1e6,
        d.host_link_ns / 1e6, d.peer_link_ns / 1e6, BindingResourceName(metrics.binding),
        host_gb, peer_gb, d.memory_bytes / 1e9, speedup));
    md.push_back(absl::StrFormat("| %s | %s | %s | %.3f | %.3f | %.0f | %.1f | %.3f | %s | %.3f | "
                                 "%.3f | %s |",
                                 r.section, r.label, profile, metrics.step_ns / 1e6, floor_ms,
                                 metrics.tokens_per_s, 100 * d.overlap, d.exposed_comm_ns / 1e6,
                                 BindingResourceName(metrics.binding), host_gb, peer_gb,
                                 speedup.empty() ? "" : speedup + "x"));
    RETURN_IF_ERROR(WriteCaseArtifacts(r.predicted, out_dir_, Slug(r.section + "_" + r.label),
                                       r.section + ": " + r.label));
  }
  RETURN_IF_ERROR(WriteFile(out_dir_ + "/study.csv", absl::StrJoin(csv, "\n") + "\n"));
  RETURN_IF_ERROR(WriteFile(out_dir_ + "/study.md", absl::StrJoin(md, "\n") + "\n"));
  std::printf("%s\n", absl::StrJoin(md, "\n").c_str());
  std::printf("\nwrote %s/study.md, study.csv, traces/*.json (Perfetto), pictures/*.png\n",
              out_dir_.c_str());
  return absl::OkStatus();
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  zosched::ParseCommandLineOrExit(
      argc, argv,
      {"distzo2_study", "",
       "The DistZO2 study, predicted from the cluster catalog: sliced against naive transfers,\n"
       "NVLink against PCIe peer links, PertP against DDP, scaling over 2 to 8 GPUs, and\n"
       "OPT-175B on one GPU against whole nodes; writes tables, traces and pictures."});
  absl::Status status =
      zosched::CheckStudyBatchAndSeq(absl::GetFlag(FLAGS_batch), absl::GetFlag(FLAGS_seq));
  if (status.ok()) {
    zosched::Study study(zosched::OutputDir(absl::GetFlag(FLAGS_out_dir), "distzo2_study"));
    status = study.Run();
  }
  return zosched::ExitWith("distzo2_study", status);
}
