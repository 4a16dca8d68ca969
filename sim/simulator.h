// The analytical simulator: Schedule -> predicted Timeline
// (docs/ARCHITECTURE.md, 'Simulator').
//
// Discrete events in a heap keyed by (time, sequence number)
// (sim/event_queue.h), so the same schedule always gives the same timeline;
// the times at which flows may end wake the loop from a heap of their own
// (sim/flows_in_flight.h). Time is integer nanoseconds from the start of
// the step.
//
// - An op starts when the previous op on its stream has finished and every
//   edge into it is satisfied (sim/op_graph.h); a collective starts when all
//   its participants have reached it, on all of them at once.
// - Compute ops take CostModel::ComputeNs; while a copy or collective of the
//   same device runs they slow down by the device's
//   compute_slowdown_under_comm (default: none; sim/compute_speed.h).
// - A stream asleep on another stream's op wakes late and the call that
//   wakes it costs the waker; the CPU testbed's devices contend for their
//   host's cores (compute ops sharing a core, the CPU each copy and
//   collective takes): sim/host_core_model.h, for a cluster that gives
//   those figures (calibrated on the testbed; the catalog's GPU clusters
//   give none, and then none of it applies).
// - Copies wait their path's latency, then flow over the path's links
//   (sim/transfer_routes.h).
// - Collectives wait their latency term, then flow over every ring (or tree)
//   edge's path at once (CostModel::Collective) and end when the last edge
//   is done; a measured collective takes its measured time.
// - All flows in flight share every link max-min fairly
//   (sim/flow_sharing.h), recomputed whenever a flow starts or ends; a flow's
//   end is rounded up to the next nanosecond.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schedule/cluster.pb.h"
#include "schedule/schedule.pb.h"
#include "schedule/timeline.pb.h"

namespace zosched {

struct LinkUsage {
  std::string name;  // Network link name, e.g. "gpu0/host_link down"
  LinkClass link_class = LINK_CLASS_UNSPECIFIED;
  double capacity_gbps = 0;
  double bytes = 0;        // carried during the step
  int64_t busy_ns = 0;     // time with at least one flow on it
  double utilisation = 0;  // bytes / (capacity × step time)
};

struct SimResult {
  Timeline timeline;             // source PREDICTED, one step (step 0)
  std::vector<LinkUsage> links;  // every link of the cluster, in Network order
  int64_t events = 0;            // events processed (for benchmarks)
};

// Simulates schedules one after another, keeping its working memory from
// one simulation to the next (and reusing the result it writes), so that a
// sweep's simulations stop allocating once warm. Each simulation depends on
// its schedule alone: the same schedule gives the same result bit for bit,
// whatever was simulated before. Not thread-safe: each thread that
// simulates needs a Simulator of its own.
class Simulator {
 public:
  Simulator();
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // Simulates one step of `schedule` on its embedded cluster into `*result`,
  // replacing all of its contents (and reusing its memory: the Timeline's
  // op intervals, the link usage). The schedule should have passed
  // ValidateSchedule; the simulator re-checks only what it needs to run.
  //
  // Errors: FailedPrecondition naming the figure when the cluster lacks one
  // that an op needs (no silent defaults), or when the schedule cannot
  // finish (ops that never become ready: a cycle or a collective a
  // participant never reaches), naming the first such ops; InvalidArgument
  // for an op whose device, stream or edge does not exist. On an error
  // `*result` holds no meaningful contents.
  absl::Status Simulate(const Schedule& schedule, SimResult* result);

 private:
  class Engine;
  std::unique_ptr<Engine> engine_;
};

// Simulator::Simulate with a Simulator of its own, for a one-off simulation:
// the result of one step of `schedule`, or Simulator::Simulate's errors.
absl::StatusOr<SimResult> Simulate(const Schedule& schedule);

}  // namespace zosched
