// The cost model under a ComputeProfile, on real lowered schedules: a GPU's
// compute op costs its kernel plan (sim/kernel_cost.h over
// kernel_plans/profile_plan.h), never less than its roofline here; a
// measured row still wins; the CPU testbed keeps the roofline; a device
// without a KernelModel and a model the implementation does not run are
// refused with the op named; Megatron-LM's fused kernels predict a GPT-2
// step faster than PyTorch eager's and above the floor.
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

#include "gtest/gtest.h"
#include "kernel_plans/profile_plan.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/lowering.h"
#include "schedule/training_settings.h"
#include "sim/cost_model.h"
#include "sim/kernel_cost.h"
#include "sim/roofline_floor.h"

namespace zosched {
namespace {

// One example of `seq` tokens; a ZO strategy holds, moves and computes in
// `dtype`, a first-order one computes in it under `precision`.
Schedule Lowered(const std::string& model_name, const std::string& cluster_name,
                 StrategyKind strategy, int seq, DType dtype,
                 PrecisionRecipe precision = AMP_FP32_MASTER) {
  absl::StatusOr<ModelSpec> model = LoadModelSpec(model_name);
  absl::StatusOr<Cluster> cluster = LoadCluster(cluster_name);
  EXPECT_TRUE(model.ok() && cluster.ok());
  LowerOptions options;
  options.strategy = strategy;
  options.precision = precision;
  options.training = DefaultTrainingSettings();
  options.training.set_batch_size(1);
  options.training.set_micro_batch_size(1);
  options.training.set_seq_len(seq);
  if (dtype != DTYPE_UNSPECIFIED) {
    if (strategy == MEZO || strategy == ZO2 || strategy == DISTZO2) {
      options.training.set_host_dtype(dtype);
      options.training.set_wire_dtype(dtype);
    }
    options.training.set_compute_dtype(dtype);
  }
  absl::StatusOr<Schedule> s = LowerSchedule(*model, *cluster, options);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : Schedule();
}

const Op& FirstOf(const Schedule& s, ComputeKind kind) {
  for (const Op& op : s.ops()) {
    if (op.has_compute() && op.compute().kind() == kind) return op;
  }
  ADD_FAILURE() << "no " << ComputeKind_Name(kind);
  return s.ops(0);
}

int64_t Ns(const Schedule& s, const Op& op) {
  absl::StatusOr<CostModel> model = CostModel::Build(s);
  EXPECT_TRUE(model.ok()) << model.status();
  absl::StatusOr<int64_t> ns = model->ComputeNs(op);
  EXPECT_TRUE(ns.ok()) << ns.status();
  return ns.ok() ? *ns : -1;
}

TEST(CostModelProfile, AGpuOpCostsItsKernelPlan) {
  Schedule s = Lowered("opt-1.3b", "h100_sxm_x1", ZO2, 2048, FP16);
  s.set_compute_profile(ZOSCHED_CUDA);
  const Op& forward = FirstOf(s, BLOCK_FORWARD);
  absl::StatusOr<KernelPlan> plan =
      ProfilePlan(ZOSCHED_CUDA, s.model(), forward.compute(), FP16, Peft());
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<PlanCost> cost =
      CostPlan(*plan, s.cluster().devices(0), ProfileHostDispatchS(ZOSCHED_CUDA));
  ASSERT_TRUE(cost.ok()) << cost.status();
  const int64_t kernels = Ns(s, forward);
  EXPECT_NEAR(kernels, cost->seconds * 1e9, 1.0);
  absl::StatusOr<CostModel> model = CostModel::Build(s);
  ASSERT_TRUE(model.ok());
  absl::StatusOr<int64_t> roofline = model->RooflineNs(forward);
  ASSERT_TRUE(roofline.ok());
  EXPECT_GT(kernels, *roofline);
  // The roofline profile: the roofline.
  s.set_compute_profile(ROOFLINE);
  EXPECT_EQ(Ns(s, forward), *roofline);
}

// Devices with equal figures share their plans' costs; a device whose
// figures differ gets its own.
TEST(CostModelProfile, EachDevicesFiguresCostItsKernels) {
  absl::StatusOr<ModelSpec> model = LoadModelSpec("opt-1.3b");
  absl::StatusOr<Cluster> cluster = LoadCluster("h100_sxm_x2");
  ASSERT_TRUE(model.ok() && cluster.ok());
  LowerOptions options;
  options.strategy = DISTZO2;
  options.pertp = 2;
  options.dp = 1;
  options.training = DefaultTrainingSettings();
  options.training.set_seq_len(512);
  absl::StatusOr<Schedule> lowered = LowerSchedule(*model, *cluster, options);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  Schedule s = *lowered;
  s.set_compute_profile(ZOSCHED_CUDA);
  // The first block forward of each device: the same shape.
  const Op* forward[2] = {nullptr, nullptr};
  for (const Op& op : s.ops()) {
    if (op.has_compute() && op.compute().kind() == BLOCK_FORWARD && op.device() < 2 &&
        forward[op.device()] == nullptr) {
      forward[op.device()] = &op;
    }
  }
  ASSERT_TRUE(forward[0] != nullptr && forward[1] != nullptr);
  // One cost model costs both (its memo shared where the figures are equal).
  auto both = [&]() -> std::pair<int64_t, int64_t> {
    absl::StatusOr<CostModel> costs = CostModel::Build(s);
    EXPECT_TRUE(costs.ok()) << costs.status();
    absl::StatusOr<int64_t> first = costs->ComputeNs(*forward[0]);
    absl::StatusOr<int64_t> second = costs->ComputeNs(*forward[1]);
    EXPECT_TRUE(first.ok() && second.ok());
    return {first.value_or(-1), second.value_or(-1)};
  };
  const auto [same0, same1] = both();
  EXPECT_EQ(same0, same1);
  // Device 1's GPU launches 100x slower.
  for (Device& d : *s.mutable_cluster()->mutable_devices()) {
    if (d.name() != s.devices(1).cluster_device()) continue;
    d.mutable_kernel_model()->set_launch_gap_s(100 * d.kernel_model().launch_gap_s());
  }
  const auto [fast, slow] = both();
  EXPECT_EQ(fast, same0);
  EXPECT_GT(slow, fast);
}

TEST(CostModelProfile, AMeasuredRowStillWins) {
  Schedule s = Lowered("opt-1.3b", "h100_sxm_x1", ZO2, 2048, FP16);
  s.set_compute_profile(ZOSCHED_CUDA);
  const Op& forward = FirstOf(s, BLOCK_FORWARD);
  MeasuredCompute* row = s.mutable_cluster()->add_measured_compute();
  row->set_op_class("BLOCK_FORWARD");
  row->set_model(s.model().name());
  row->set_examples(forward.compute().examples());
  row->set_seq_len(forward.compute().seq_len());
  row->set_elements(forward.compute().params().elements());
  row->set_seconds(0.004);
  EXPECT_EQ(Ns(s, forward), 4000000);
}

TEST(CostModelProfile, TheCpuTestbedKeepsTheRoofline) {
  Schedule s = Lowered("opt-tiny", "local_cpu", ZO2, 32, DTYPE_UNSPECIFIED);
  const Op& forward = FirstOf(s, BLOCK_FORWARD);
  const int64_t roofline = Ns(s, forward);
  s.set_compute_profile(ZOSCHED_CUDA);
  EXPECT_EQ(Ns(s, forward), roofline);
}

TEST(CostModelProfile, RefusalsNameTheOp) {
  Schedule s = Lowered("opt-1.3b", "h100_sxm_x1", ZO2, 2048, FP16);
  s.set_compute_profile(ZOSCHED_CUDA);
  s.mutable_cluster()->mutable_devices(0)->clear_kernel_model();
  const Op& forward = FirstOf(s, BLOCK_FORWARD);
  absl::StatusOr<CostModel> model = CostModel::Build(s);
  ASSERT_TRUE(model.ok());
  absl::StatusOr<int64_t> ns = model->ComputeNs(forward);
  ASSERT_FALSE(ns.ok());
  EXPECT_NE(ns.status().message().find("(profile ZOSCHED_CUDA): device 'gpu0'"),
            std::string::npos)
      << ns.status();
  EXPECT_NE(ns.status().message().find("lacks kernel_model"), std::string::npos);
  EXPECT_NE(ns.status().message().find(absl::StrCat("op ", forward.id())), std::string::npos);

  Schedule llama = Lowered("llama-tiny", "h100_sxm_x1", MEZO, 32, FP16);
  llama.set_compute_profile(PYTORCH_MEZO);
  const Op& llama_forward = FirstOf(llama, BLOCK_FORWARD);
  model = CostModel::Build(llama);
  ASSERT_TRUE(model.ok());
  ns = model->ComputeNs(llama_forward);
  ASSERT_FALSE(ns.ok());
  EXPECT_EQ(ns.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(ns.status().message().find("LLAMA"), std::string::npos) << ns.status();
}

// Megatron-LM launches fewer kernels (TE's LayerNorm-GEMMs, bias-GELU and
// bias-dropout-add fused, no autocast casts, FusedAdam) and moves fewer
// bytes than PyTorch eager for the same step, which runs at the host's
// pace: its prediction is the faster, and still above its roofline floor.
TEST(CostModelProfile, MegatronIsFasterThanPyTorchEagerAboveItsFloor) {
  // GPT-2 124M on one H100, one sequence of 1,024 tokens a step, in BF16
  // with fused attention: PyTorch AMP's recipe, and Megatron's.
  Schedule pytorch = Lowered("gpt2-small", "h100_sxm_x1", SINGLE_DEVICE, 1024, BF16);
  pytorch.set_compute_profile(PYTORCH_FIRST_ORDER);
  Schedule megatron_schedule =
      Lowered("gpt2-small", "h100_sxm_x1", SINGLE_DEVICE, 1024, BF16, BF16_FP32_GRADS);
  megatron_schedule.set_compute_profile(MEGATRON_FIRST_ORDER);
  SimResult result;
  absl::StatusOr<StepWithFloor> eager = SimulateWithFloor(pytorch, &result);
  absl::StatusOr<StepWithFloor> megatron = SimulateWithFloor(megatron_schedule, &result);
  ASSERT_TRUE(eager.ok()) << eager.status();
  ASSERT_TRUE(megatron.ok()) << megatron.status();
  EXPECT_LT(megatron->metrics.step_ns, eager->metrics.step_ns);
  EXPECT_GT(megatron->metrics.step_ns, megatron->floor_ns);
}

}  // namespace
}  // namespace zosched
