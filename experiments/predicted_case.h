// One predicted case of a study: a strategy lowered for a model on a
// cluster, simulated, with its step metrics; the pieces every simulated
// study shares (distzo2_study, first_order_study, zo_vs_first_order).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "schedule/cluster.pb.h"
#include "schedule/lower_options.h"
#include "schedule/schedule.pb.h"
#include "schedule/timeline_metrics.h"
#include "sim/simulator.h"

namespace zosched {

struct PredictedCase {
  Schedule schedule;    // with the compute profile it was predicted under
  SimResult result;     // the step under that profile
  StepMetrics metrics;  // of that step: the kernel-level prediction
  int64_t floor_ns = 0;  // the same schedule with every compute op at its
                         // roofline (sim/roofline_floor.h)
};

// Lowers `options` for `model` (a zoo name or file) on `cluster`, names its
// kernel-level compute profile in the schedule (KernelProfileFor:
// zosched_cuda for ZO; pytorch_first_order for first-order AMP training of
// OPT and GPT-2 without recomputation; else the roofline) and
// simulates one step under it and its roofline floor (SimulateWithFloor).
// Errors: those of LoadModelSpec, LowerSchedule (a plan that does not fit:
// ResourceExhausted with the shortfall) and SimulateWithFloor.
absl::StatusOr<PredictedCase> PredictCase(const std::string& model, const Cluster& cluster,
                                          const LowerOptions& options);

// A device's memory plan by what it holds, in bytes (they sum to the plan).
struct MemoryBreakdown {
  int64_t model_states = 0;  // parameters (resident, slots, host-streamed copies),
                             // gradients, optimizer state, master weights, ZO state
  int64_t activations = 0;   // residual streams, saved activations, workspaces,
                             // perturbed scratch, losses
  int64_t comm_buffers = 0;  // gradient buckets, wire staging
  int64_t total() const { return model_states + activations + comm_buffers; }
};
MemoryBreakdown DeviceMemory(const Schedule& schedule, int device);
// Bytes of host memory the schedule's host buffers take on its busiest host.
int64_t HostMemory(const Schedule& schedule);

// Writes the case's Chrome trace to DIR/traces/SLUG.json and its timeline
// picture to DIR/pictures/SLUG.png (experiments/timeline_plot.h), titled
// `title` and the schedule's name.
absl::Status WriteCaseArtifacts(const PredictedCase& c, const std::string& dir,
                                const std::string& slug, const std::string& title);

// The --batch and --seq flags of a study whose cases split the batch over up
// to 8 GPUs and run OPT models (2,048 positions): batch a multiple of 8,
// seq 1 to 2,048. Errors: InvalidArgument naming the flag and the range.
absl::Status CheckStudyBatchAndSeq(int batch, int seq);

// `text` made safe for a file name: spaces and punctuation become "_".
std::string Slug(const std::string& text);

}  // namespace zosched
