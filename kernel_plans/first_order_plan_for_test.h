// The first-order plans' tests (pytorch_first_order_plan_test.cc,
// megatron_plan_test.cc) lower real one-GPU schedules onto
// OneGpuClusterForTest and read their ops' plans with these.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "kernel_plans/kernel.h"
#include "kernel_plans/one_gpu_cluster_for_test.h"
#include "schedule/lowering.h"

namespace zosched {

struct FirstOrderSetting {
  int batch = 4, micro = 2, seq = 256;
  DType compute = FP16;
  PrecisionRecipe precision = AMP_FP32_MASTER;
  bool flash = true, recompute = false;
};

// A one-device first-order schedule of `model` at `x`.
inline Schedule LowerFirstOrder(const ModelSpec& model, const FirstOrderSetting& x) {
  LowerOptions options;
  options.strategy = SINGLE_DEVICE;
  options.precision = x.precision;
  options.flash_attention = x.flash;
  options.recompute = x.recompute;
  TrainingSettings& t = options.training;
  t.set_batch_size(x.batch);
  t.set_micro_batch_size(x.micro);
  t.set_seq_len(x.seq);
  t.set_epsilon(1e-3);
  t.set_learning_rate(1e-4);
  t.set_seed_policy(SEED_FROM_STEP);
  t.set_num_label_words(2);
  t.set_compute_dtype(x.compute);
  absl::StatusOr<Schedule> s = LowerSchedule(model, OneGpuClusterForTest(), options);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : Schedule();
}

// The first compute op of `kind` (of `part`, when given) in `s`.
inline ComputeOp FirstOp(const Schedule& s, ComputeKind kind, Part part = PART_UNSPECIFIED) {
  for (const Op& op : s.ops()) {
    if (op.has_compute() && op.compute().kind() == kind &&
        (part == PART_UNSPECIFIED || op.compute().params().part() == part)) {
      return op.compute();
    }
  }
  ADD_FAILURE() << "no " << ComputeKind_Name(kind) << " op";
  return ComputeOp();
}

// FLOPs of the plan's GEMMs whose name contains `containing`.
inline double GemmFlops(const KernelPlan& plan, const std::string& containing = "") {
  double flops = 0;
  for (const Kernel& k : plan) {
    if (k.kind == KernelKind::kGemm && absl::StrContains(k.name, containing)) {
      flops += k.flops * k.launches;
    }
  }
  return flops;
}

// Launches of the kernels whose name contains `containing`.
inline int64_t LaunchesNamed(const KernelPlan& plan, const std::string& containing) {
  int64_t n = 0;
  for (const Kernel& k : plan) {
    if (absl::StrContains(k.name, containing)) n += k.launches;
  }
  return n;
}

// Every kernel launches, moves bytes, and a GEMM's FLOPs are its shape's.
inline void ExpectWellFormed(const KernelPlan& plan) {
  EXPECT_FALSE(plan.empty());
  for (const Kernel& k : plan) {
    EXPECT_GE(k.launches, 1) << k.name;
    EXPECT_GT(k.bytes, 0) << k.name;
    if (k.kind == KernelKind::kGemm) {
      EXPECT_DOUBLE_EQ(k.flops, 2.0 * k.m * k.n * k.k * k.batch) << k.name;
    }
  }
}

// `plan` refuses `op` with each ZO kind (UPDATE to CAST) in its place,
// naming the kind.
inline void ExpectRefusesZoKinds(const ComputeOp& op,
                                 const std::function<absl::Status(const ComputeOp&)>& plan) {
  for (const ComputeKind kind : {UPDATE, EMBED, BLOCK_FORWARD, HEAD_LOSS, PROJECTED_GRADIENT,
                                 CAST}) {
    ComputeOp zo = op;
    zo.set_kind(kind);
    const absl::Status status = plan(zo);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << ComputeKind_Name(kind);
    EXPECT_TRUE(absl::StrContains(status.message(), ComputeKind_Name(kind))) << status;
  }
}

// An OPTIMIZER_STEP of `elements` of `part` from `first`, without master
// weights.
inline ComputeOp StepOp(Part part, int64_t first, int64_t elements) {
  ComputeOp op;
  op.set_kind(OPTIMIZER_STEP);
  op.mutable_params()->set_part(part);
  op.mutable_params()->set_first_element(first);
  op.mutable_params()->set_elements(elements);
  return op;
}

}  // namespace zosched
