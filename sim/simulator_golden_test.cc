// The simulator's timelines, pinned: a fingerprint of the whole predicted
// Timeline (every op's start and end, the step) and of the link usage for
// schedules that exercise every mechanism: sliced and naive DistZO2 (flow
// sharing on NVSwitch, PCIe switches, duplex caps), ZO2 with a narrow wire,
// first-order ZeRO-3 (two collective streams), and the CPU testbed (compute
// slowed by communication and by core sharing). A faster simulator must
// give these bit for bit; a change to the model of time must update them
// on purpose, saying why.
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/lowering.h"
#include "schedule/strategy_grid.h"
#include "sim/simulator.h"

namespace zosched {
namespace {

// FNV-1a, 64 bits.
class Fingerprint {
 public:
  void Add(const void* data, size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < size; ++i) hash_ = (hash_ ^ bytes[i]) * 0x100000001b3ULL;
  }
  void Add(int64_t v) { Add(&v, sizeof v); }
  void Add(double v) { Add(&v, sizeof v); }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 0xcbf29ce484222325ULL;
};

struct Case {
  const char* model;
  const char* cluster;
  StrategyKind strategy;
  int pertp, dp;
  bool slicing;
  int seq;
  DType wire;
  uint64_t want;
};

uint64_t TimelineFingerprint(const Case& c) {
  LowerOptions o = GridLowerOptions({c.strategy, c.pertp, c.dp, c.slicing});
  o.training.set_seq_len(c.seq);
  o.training.set_wire_dtype(c.wire);
  if (c.strategy == ZERO_3) {
    o.training.set_batch_size(8 * c.dp);
    o.training.set_micro_batch_size(4);
  }
  absl::StatusOr<Schedule> s = LowerSchedule(*LoadModelSpec(c.model), *LoadCluster(c.cluster), o);
  EXPECT_TRUE(s.ok()) << s.status();
  absl::StatusOr<SimResult> r = Simulate(*s);
  EXPECT_TRUE(r.ok()) << r.status();
  Fingerprint f;
  for (const StepInterval& step : r->timeline.steps()) {
    f.Add(step.start_ns());
    f.Add(step.end_ns());
  }
  for (const OpInterval& op : r->timeline.ops()) {
    f.Add(op.op_id());
    f.Add(static_cast<int64_t>(op.device()));
    f.Add(op.stream().data(), op.stream().size());
    f.Add(op.start_ns());
    f.Add(op.end_ns());
  }
  for (const LinkUsage& l : r->links) {
    f.Add(l.bytes);
    f.Add(l.busy_ns);
    f.Add(l.utilisation);
  }
  return f.value();
}

TEST(SimulatorGolden, TimelinesAreBitForBitThoseOfTheReferenceEngine) {
  const Case cases[] = {
      {"opt-175b", "dgx_a100", DISTZO2, 2, 4, true, 2048, DTYPE_UNSPECIFIED, 0xa37b23566f9278a2},
      {"opt-13b", "hgx_h100", DISTZO2, 2, 4, false, 2048, DTYPE_UNSPECIFIED, 0xebbe54963afa8fdb},
      {"opt-1.3b", "rtx4090_x8", DISTZO2, 1, 8, true, 512, DTYPE_UNSPECIFIED, 0xecffb7e92a70d5ea},
      {"opt-13b", "h100_pcie_x4", ZO2, 1, 1, true, 256, FP16, 0xa0a3104432f409cd},
      {"gpt2-large", "h100_sxm_x2", ZERO_3, 1, 2, true, 1024, DTYPE_UNSPECIFIED,
       0x0b68152518aba83e},
      // Changed on purpose when a collective member's interval began to
      // start at its own arrival, when devices computing on one core began
      // to change hands where the scheduler decides, each op starting when
      // its thread first runs it, and when the devices of one host on a
      // core began to take turns op by op, in the order their ops became
      // ready (sim/host_cores.h, runtime/core_turns.h).
      {"opt-tiny", "local_cpu", DISTZO2, 2, 2, true, 32, DTYPE_UNSPECIFIED, 0x59ede4c5a7bfedfe},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(absl::StrFormat("0x%016x", TimelineFingerprint(c)),
              absl::StrFormat("0x%016x", c.want))
        << c.model << " " << StrategyKind_Name(c.strategy) << " on " << c.cluster;
  }
}

}  // namespace
}  // namespace zosched
