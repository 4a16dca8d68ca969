// Validates a Schedule file and prints, per device, what one step computes
// and moves, and the memory plan.
//
//   bazel run //schedule:inspect -- /tmp/s.pbtxt
//
// Command line and exit status as every tool's (base/command_line.h): 0 if
// the schedule is valid; 2 if it cannot be read or does not validate (the
// message names the ops and buffers involved), or for bad usage (no file,
// two files, an unknown flag).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/command_line.h"
#include "base/proto_file.h"
#include "base/status_macros.h"
#include "base/user_path.h"
#include "models/accounting.h"
#include "models/model_spec.h"
#include "schedule/first_order_model.h"
#include "schedule/schedule_stats.h"
#include "schedule/validate.h"

namespace zosched {
namespace {

std::string Gb(int64_t bytes) { return absl::StrFormat("%.3f GB", bytes / 1e9); }

void Print(const Schedule& schedule) {
  const Strategy& s = schedule.strategy();
  const TrainingSettings& t = schedule.training();
  std::printf("schedule: %s\n", schedule.name().c_str());
  if (IsFirstOrder(s.kind())) {
    std::printf(
        "strategy: %s (first-order, simulated only) devices=%d precision=%s "
        "recompute=%s flash_attention=%s%s\n",
        StrategyKind_Name(s.kind()).c_str(), s.dp(), PrecisionRecipe_Name(s.precision()).c_str(),
        s.recompute() ? "true" : "false", s.flash_attention() ? "true" : "false",
        s.kind() == DDP ? absl::StrFormat(" bucket_bytes=%d", s.bucket_bytes()).c_str() : "");
  } else {
    std::printf("strategy: %s P=%d D=%d slicing=%s block_slots=%d\n",
                StrategyKind_Name(s.kind()).c_str(), s.pertp(), s.dp(),
                s.slicing() ? "true" : "false", s.block_slots());
  }
  std::printf("training: batch %d, micro-batch %d, seq %d, dtypes host %s wire %s "
              "compute %s\n",
              t.batch_size(), t.micro_batch_size(), t.seq_len(),
              DType_Name(t.host_dtype()).c_str(), DType_Name(t.wire_dtype()).c_str(),
              DType_Name(t.compute_dtype()).c_str());
  std::printf("valid: %d devices, %d ops, %d edges, %d buffers\n",
              schedule.devices_size(), schedule.ops_size(), schedule.edges_size(),
              schedule.buffers_size());
  // Whole-block streaming: every block in full over one host link each way.
  const int64_t whole_blocks = schedule.model().num_layers() *
                               BlockBytes(schedule.model(), t.wire_dtype());
  for (const DeviceStats& d : ComputeDeviceStats(schedule)) {
    std::printf("\ndevice %d (%s)\n", d.device, d.cluster_device.c_str());
    std::vector<std::string> counts;
    for (const auto& [kind, count] : d.ops_by_kind) {
      counts.push_back(absl::StrFormat("%s %d", kind, count));
    }
    std::printf("  ops: %s\n", absl::StrJoin(counts, ", ").c_str());
    std::printf("  flops per step: %.4g\n", static_cast<double>(d.flops));
    std::printf("  host link per step: h2d %ld B (%s), d2h %ld B (%s)", d.h2d_bytes,
                Gb(d.h2d_bytes).c_str(), d.d2h_bytes, Gb(d.d2h_bytes).c_str());
    if (schedule.strategy().kind() != MEZO && !IsFirstOrder(schedule.strategy().kind())) {
      std::printf("; %.4g of whole-block streaming (%ld B)",
                  static_cast<double>(d.h2d_bytes) / whole_blocks, whole_blocks);
    }
    std::printf("\n  peer links per step: collectives received %ld B (%s), peer copies %ld B\n",
                d.collective_bytes, Gb(d.collective_bytes).c_str(), d.d2d_bytes);
    std::vector<std::string> by_class;
    for (const auto& [link_class, bytes] : d.bytes_by_link_class) {
      by_class.push_back(absl::StrFormat("%s %s", LinkClass_Name(link_class), Gb(bytes)));
    }
    std::printf("  bytes per link class per step: %s\n", absl::StrJoin(by_class, ", ").c_str());
    std::printf("  peak memory (the plan): %ld B (%s)\n", d.memory_bytes,
                Gb(d.memory_bytes).c_str());
  }
  std::printf("\nbuffers:\n");
  for (const Buffer& b : schedule.buffers()) {
    std::printf("  %-22s %-16s %-10s %14ld B  %s%s\n", b.name().c_str(),
                BufferKind_Name(b.kind()).c_str(),
                b.device() >= 0 ? absl::StrFormat("device %d", b.device()).c_str()
                                : b.host().c_str(),
                b.size_bytes(), DType_Name(b.dtype()).c_str(),
                b.persistent() ? "  persistent" : "");
  }
}

absl::Status Run(const std::string& path) {
  Schedule schedule;
  RETURN_IF_ERROR(ReadProtoFile(ResolveUserPath(path), &schedule));
  RETURN_IF_ERROR(ValidateSchedule(schedule));
  Print(schedule);
  return absl::OkStatus();
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  const std::vector<std::string> args = zosched::ParseCommandLineOrExit(
      argc, argv,
      {"inspect", "SCHEDULE_FILE",
       "Validates a Schedule file (.pbtxt: text, else binary) and prints, per device, what one\n"
       "step computes and moves, and the memory plan."});
  return zosched::ExitWith("inspect", zosched::Run(args[0]));
}
