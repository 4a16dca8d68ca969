// ValidateSchedule's semantic rules, one test per rule: a real schedule
// lowered for opt-tiny on the CPU testbed, one field changed by an inline
// textproto patch (merged into the op, buffer or settings), and the error
// that must name the op, the field, the value and what was expected. The
// structural rules have their own tests (validate_structure_test.cc).
#include "schedule/validate.h"

#include <initializer_list>
#include <string>

#include "base/textproto.h"
#include "gtest/gtest.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/lowering.h"

namespace zosched {
namespace {

// opt-tiny (4 layers) on local_cpu, batch 4 (or 6 for three data-parallel
// groups), seq 8.
Schedule Lowered(StrategyKind strategy, int pertp = 1, int dp = 1, DType wire = DTYPE_UNSPECIFIED,
                 bool lora = false) {
  absl::StatusOr<ModelSpec> model = LoadModelSpec("opt-tiny");
  absl::StatusOr<Cluster> cluster = LoadCluster("local_cpu");
  EXPECT_TRUE(model.ok() && cluster.ok());
  LowerOptions o;
  o.strategy = strategy;
  o.pertp = pertp;
  o.dp = dp;
  o.block_slots = 2;
  o.training = DefaultTrainingSettings();
  o.training.set_batch_size(dp == 3 ? 6 : 4);
  o.training.set_seq_len(8);
  o.training.set_wire_dtype(wire);
  if (lora) {
    o.training.mutable_peft()->set_kind(LORA);
    o.training.mutable_peft()->set_lora_rank(2);
    o.training.mutable_peft()->set_lora_alpha(4);
  }
  absl::StatusOr<Schedule> s = LowerSchedule(*model, *cluster, o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : Schedule();
}

// ZO2 with a BF16 wire (uploads land in staging slots, CASTs widen them).
Schedule Zo2() { return Lowered(ZO2, 1, 1, BF16); }
// DistZO2 P1×D2, sliced: all-gathers of blocks and losses.
Schedule Sliced() { return Lowered(DISTZO2, 1, 2); }
// ZO2 training LoRA adapters (rank 2) over a frozen base.
Schedule Lora() { return Lowered(ZO2, 1, 1, DTYPE_UNSPECIFIED, /*lora=*/true); }

Op& OpNamed(Schedule& s, const std::string& name, int device = 0) {
  for (Op& op : *s.mutable_ops()) {
    if (op.name() == name && op.device() == device) return op;
  }
  ADD_FAILURE() << "no op '" << name << "' on device " << device;
  return *s.mutable_ops(0);
}

Buffer& BufferNamed(Schedule& s, const std::string& name) {
  for (Buffer& b : *s.mutable_buffers()) {
    if (b.name() == name) return b;
  }
  ADD_FAILURE() << "no buffer '" << name << "'";
  return *s.mutable_buffers(0);
}

// Merges the textproto `patch` into `message`.
template <typename Message>
void Patch(Message& message, const std::string& patch) {
  Message parsed;
  absl::Status status = ParseTextProto(patch, "patch", &parsed);
  ASSERT_TRUE(status.ok()) << status;
  message.MergeFrom(parsed);
}

// `s` with the textproto `patch` merged into its op `op_name` on `device`.
Schedule WithOpPatch(Schedule s, const std::string& op_name, const std::string& patch,
                     int device = 0) {
  Patch(OpNamed(s, op_name, device), patch);
  return s;
}

void ExpectInvalid(const Schedule& s, std::initializer_list<std::string> parts) {
  const absl::Status status = ValidateSchedule(s);
  ASSERT_FALSE(status.ok()) << "expected an error containing " << *parts.begin();
  for (const std::string& part : parts) {
    EXPECT_NE(status.message().find(part), std::string::npos)
        << "missing '" << part << "' in: " << status.message();
  }
}

TEST(ValidateSchedule, LoweredSchedulesAreValid) {
  // P1×D3 slices a block of 49,984 elements into three chunks, the last
  // one padded: the padding travels in the all-gather but is never read.
  for (const Schedule& s : {Lowered(MEZO), Zo2(), Sliced(), Lowered(DISTZO2, 2, 2),
                            Lowered(DISTZO2, 2, 1, BF16), Lowered(DISTZO2, 1, 3), Lora(),
                            Lowered(DISTZO2, 2, 2, BF16, /*lora=*/true)}) {
    EXPECT_TRUE(ValidateSchedule(s).ok()) << s.name() << ": " << ValidateSchedule(s);
  }
}

// The Megatron-LM profile costs first-order schedules of its BF16 recipe;
// anything else is refused with the profiles that would cost it.
TEST(ValidateSchedule, RejectsTheMegatronProfileOutsideItsRecipe) {
  Schedule s = Zo2();
  s.set_compute_profile(MEGATRON_FIRST_ORDER);
  ExpectInvalid(s, {"compute_profile MEGATRON_FIRST_ORDER", "first-order schedules", "not ZO2",
                    "ROOFLINE, ZOSCHED_CUDA, PYTORCH_MEZO or PYTORCH_ZO2"});
  absl::StatusOr<ModelSpec> model = LoadModelSpec("opt-tiny");
  absl::StatusOr<Cluster> cluster = LoadCluster("local_cpu");
  ASSERT_TRUE(model.ok() && cluster.ok());
  LowerOptions o;
  o.strategy = DDP;
  o.dp = 2;
  o.training = DefaultTrainingSettings();
  o.training.set_batch_size(4);
  o.training.set_seq_len(8);
  for (const PrecisionRecipe precision : {AMP_FP32_MASTER, BF16_FP32_GRADS}) {
    o.precision = precision;
    absl::StatusOr<Schedule> ddp = LowerSchedule(*model, *cluster, o);
    ASSERT_TRUE(ddp.ok()) << ddp.status();
    ddp->set_compute_profile(MEGATRON_FIRST_ORDER);
    if (precision == BF16_FP32_GRADS) {
      EXPECT_TRUE(ValidateSchedule(*ddp).ok()) << ValidateSchedule(*ddp);
    } else {
      ExpectInvalid(*ddp, {"compute_profile MEGATRON_FIRST_ORDER", "BF16_FP32_GRADS",
                           "not AMP_FP32_MASTER", "PYTORCH_FIRST_ORDER or ROOFLINE"});
    }
  }
}

// 1. The embedded cluster, model and training settings.

TEST(ValidateSchedule, ChecksTheEmbeddedModel) {
  Schedule s = Zo2();
  s.mutable_model()->set_num_heads(5);
  ExpectInvalid(s, {"model 'opt-tiny'", "hidden_size 64 is not divisible by num_heads 5"});
}

TEST(ValidateSchedule, ChecksTheEmbeddedCluster) {
  Schedule s = Zo2();
  Patch(*s.mutable_cluster()->mutable_devices(0), R"pb(host: "elsewhere")pb");
  ExpectInvalid(s, {"schedule 'opt-tiny zo2 on local_cpu'", "cpu0", "elsewhere"});
}

TEST(ValidateSchedule, ChecksTrainingSettingsRanges) {
  struct Case {
    std::string patch;
    std::string message;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"epsilon: -0.001", "epsilon is -0.001 (expected a finite ε > 0"},
           {"learning_rate: -1", "learning_rate is -1 (expected a finite η >= 0"},
           {"weight_decay: inf", "weight_decay is inf (expected a finite λ >= 0)"},
           {"seq_len: 65", "seq_len is 65 (expected 1 to model 'opt-tiny' max_positions 64)"},
           {"num_label_words: 1000", "num_label_words is 1000 (expected 1 to the vocabulary"},
       }) {
    Schedule s = Zo2();
    Patch(*s.mutable_training(), c.patch);
    ExpectInvalid(s, {c.message});
  }
}

// Proto3 enums are open: a file may hold any number in an enum field. An
// undefined dtype used to abort in DTypeBytes, the other fields to pass
// (found by fuzz/schedule_text_fuzzer).
TEST(ValidateSchedule, RejectsEnumNumbersThatNameNoValue) {
  Schedule s = Zo2();
  s.mutable_training()->set_compute_dtype(static_cast<DType>(99));
  ExpectInvalid(s, {"training compute_dtype is 99, not a DType"});
  s = Zo2();
  s.mutable_training()->set_wire_dtype(static_cast<DType>(99));
  ExpectInvalid(s, {"training wire_dtype is 99, not a DType"});
  s = Zo2();
  BufferNamed(s, "d0/zo_state").set_dtype(static_cast<DType>(99));
  ExpectInvalid(s, {"buffer 'd0/zo_state': kind ZO_STATE (", "dtype  (99); both must be set"});
  s = Zo2();
  s.mutable_strategy()->set_kind(static_cast<StrategyKind>(99));
  ExpectInvalid(s, {"strategy.kind is 99, not a StrategyKind"});
  s = Zo2();
  s.mutable_strategy()->set_precision(static_cast<PrecisionRecipe>(43));
  ExpectInvalid(s, {"strategy.precision is 43, not a PrecisionRecipe"});  s = Zo2();
  s.set_compute_profile(static_cast<ComputeProfile>(9));
  ExpectInvalid(s, {"compute_profile is 9, not a ComputeProfile"});
  s = Zo2();
  s.mutable_cluster()->mutable_devices(0)->mutable_host_link()->set_link_class(
      static_cast<LinkClass>(42));
  ExpectInvalid(s, {"host_link.link_class is 42, not a value of its enum"});
  s = Zo2();
  OpNamed(s, "h2d block 0").mutable_copy()->set_link_class(static_cast<LinkClass>(42));
  ExpectInvalid(s, {"'h2d block 0'", "copy.link_class is 42; expected the class of the link"});
  s = Sliced();
  OpNamed(s, "all-gather block 1", 1).mutable_collective()->set_link_class(
      static_cast<LinkClass>(42));
  ExpectInvalid(s, {"'all-gather block 1' (device 1", "collective.link_class is 42"});
}

// 2. Op fields against the model and the training settings.

TEST(ValidateSchedule, RejectsABlockIndexPastTheModel) {
  Schedule s = WithOpPatch(Zo2(), "fwd+ block 2", R"pb(compute { params { block: 9 } })pb");
  ExpectInvalid(s, {"'fwd+ block 2'", "compute.params.block is 9", "0 to 3 (model 'opt-tiny' has 4 layers)"});
}

TEST(ValidateSchedule, RejectsAForwardOfTheWrongSign) {
  Schedule s = WithOpPatch(Zo2(), "fwd- block 1", R"pb(compute { sign: PLUS })pb");
  ExpectInvalid(s, {"'fwd- block 1'", "sign PLUS", "is the MINUS path", "check the op's sign"});
}

TEST(ValidateSchedule, RejectsAnUnsetSign) {
  Schedule s = Zo2();
  OpNamed(s, "embed+").mutable_compute()->set_sign(SIGN_UNSPECIFIED);
  ExpectInvalid(s, {"'embed+'", "compute.sign is SIGN_UNSPECIFIED; expected PLUS or MINUS"});
}

TEST(ValidateSchedule, RejectsABlockOutOfOrder) {
  // The slot holds whatever block the op says; the residual stream knows
  // it has passed blocks 0 and 1 only.
  Schedule s = WithOpPatch(Zo2(), "fwd+ block 2", R"pb(compute { params { block: 3 } })pb");
  ExpectInvalid(s, {"'fwd+ block 2'", "has passed blocks 0 to 1", "the BLOCK_FORWARD of block 2"});
}

TEST(ValidateSchedule, RejectsExamplesThatDisagreeWithTheBatch) {
  Schedule s = WithOpPatch(Zo2(), "fwd+ block 0", R"pb(compute { examples: 2 })pb");
  ExpectInvalid(s, {"compute.examples is 2; expected 4, the training micro_batch_size"});
  s = WithOpPatch(Zo2(), "embed+", R"pb(compute { first_example: 3 })pb");
  ExpectInvalid(s, {"'embed+'", "compute.first_example is 3; expected 0 to 0"});
}

TEST(ValidateSchedule, RejectsASeqLenOtherThanTheTrainings) {
  Schedule s = WithOpPatch(Zo2(), "head- loss", R"pb(compute { seq_len: 16 })pb");
  ExpectInvalid(s, {"'head- loss'", "compute.seq_len is 16; expected 8 (the training seq_len)"});
}

TEST(ValidateSchedule, RejectsElementRangesOutsideThePart) {
  Schedule s = WithOpPatch(Zo2(), "update block 1",
                           R"pb(compute { params { elements: 999999 } })pb");
  ExpectInvalid(s, {"'update block 1'", "compute.params elements is [0, +999999)",
                    "inside the DECODER_BLOCK's 49984 elements"});
}

TEST(ValidateSchedule, RejectsHandEditedCosts) {
  Schedule s = WithOpPatch(Zo2(), "fwd+ block 3", R"pb(compute { flops: 1 })pb");
  ExpectInvalid(s, {"'fwd+ block 3'", "compute.flops is 1; expected", "compute_op_model.h"});
  s = WithOpPatch(Zo2(), "update head", R"pb(compute { bytes_accessed: 7 })pb");
  ExpectInvalid(s, {"'update head'", "compute.bytes_accessed is 7"});
}

TEST(ValidateSchedule, RejectsMissingAndExtraOperandRoles) {
  Schedule s = Zo2();
  OpNamed(s, "fwd+ block 0").mutable_compute()->clear_workspace();
  ExpectInvalid(s, {"'fwd+ block 0'", "compute.workspace is unset; expected set for BLOCK_FORWARD"});
  s = WithOpPatch(
      Zo2(), "update embedding",
      R"pb(compute { losses { buffer: "d0/losses" offset_bytes: 0 size_bytes: 4 } })pb");
  ExpectInvalid(s, {"'update embedding'", "compute.losses is set; expected unset for UPDATE"});
}

// Under LoRA a forward reads its block's adapters, only adapters take
// updates, and without LoRA there are none.
TEST(ValidateSchedule, HoldsLoraSchedulesToTheFrozenBase) {
  Schedule s = Lora();
  OpNamed(s, "fwd+ block 1").mutable_compute()->clear_adapters();
  ExpectInvalid(s, {"'fwd+ block 1'", "compute.adapters is unset; expected set for BLOCK_FORWARD"});
  s = Lora();
  // Block 2's adapters, where they are.
  ParamOperand* adapters = OpNamed(s, "fwd- block 1").mutable_compute()->mutable_adapters();
  adapters->set_block(2);
  adapters->mutable_range()->set_offset_bytes(2 * adapters->range().size_bytes());
  ExpectInvalid(s, {"'fwd- block 1'", "compute.adapters is ADAPTER_PART 2; expected ADAPTER_PART 1"});
  // The adapters' update pointed at the base block in its slot.
  s = Lora();
  Op& update = OpNamed(s, "update adapters block 0");
  *update.mutable_compute()->mutable_params() = OpNamed(s, "fwd+ block 0").compute().params();
  ExpectInvalid(s, {"'update adapters block 0'", "compute.params.part is DECODER_BLOCK; expected "
                    "ADAPTER_PART: under training.peft LORA or PREFIX the base parameters "
                    "are frozen"});
  s = Zo2();
  s.mutable_training()->mutable_peft()->set_lora_rank(8);
  ExpectInvalid(s, {"peft sets LoRA fields", "its kind is PEFT_NONE"});
}

TEST(ValidateSchedule, RejectsOperandsOfTheWrongKindOrSize) {
  Schedule s = WithOpPatch(Zo2(), "fwd- block 0",
                           R"pb(compute { perturbed { buffer: "d0/workspace" } })pb");
  ExpectInvalid(s, {"the kind of compute.perturbed buffer 'd0/workspace' is WORKSPACE; expected "
                    "PERTURBED_WEIGHTS"});
  s = WithOpPatch(Zo2(), "embed-", R"pb(compute { activations { size_bytes: 64 } })pb");
  ExpectInvalid(s, {"'embed-'", "compute.activations.size_bytes is 64; expected 8192"});
}

TEST(ValidateSchedule, RejectsParametersWhereTheBufferDoesNotHoldThem) {
  Schedule s = Lowered(MEZO);
  // Block 1's update pointed at block 2's bytes.
  Op& update = OpNamed(s, "update block 1");
  const int64_t block_bytes = update.compute().params().range().size_bytes();
  update.mutable_compute()->mutable_params()->mutable_range()->set_offset_bytes(2 * block_bytes);
  ExpectInvalid(s, {"'update block 1'", "compute.params.range.offset_bytes is 399872; expected "
                    "199936, where buffer 'd0/blocks' holds element 0 of DECODER_BLOCK"});
}

TEST(ValidateSchedule, RejectsRolesMissingFromReadsOrWrites) {
  Schedule s = Zo2();
  OpNamed(s, "fwd+ block 1").mutable_writes()->RemoveLast();  // the perturbed scratch
  ExpectInvalid(s, {"'fwd+ block 1'", "the writes of compute.perturbed is missing"});
}

TEST(ValidateSchedule, RejectsACastDirectionOutsideCasts) {
  Schedule s = WithOpPatch(Zo2(), "update block 0",
                           R"pb(compute { cast_direction: WIRE_TO_COMPUTE })pb");
  ExpectInvalid(s, {"compute.cast_direction is WIRE_TO_COMPUTE; expected unset for this kind"});
}

// 3. Copies.

TEST(ValidateSchedule, RejectsACopyWhoseDtypeDisagreesWithItsBuffer) {
  // The upload lands in a BF16 staging slot; claiming FP32 there is what
  // made the runtime write twice the bytes.
  Schedule s = WithOpPatch(Zo2(), "h2d block 0", R"pb(copy { dst_dtype: FP32 })pb");
  ExpectInvalid(s, {"'h2d block 0'", "copy.src_dtype / dst_dtype is FP32 / FP32; expected FP32 / "
                    "BF16"});
}

TEST(ValidateSchedule, RejectsCopyBytesThatDisagreeWithTheElements) {
  Schedule s = WithOpPatch(Zo2(), "d2h block 3", R"pb(copy { bytes: 12 })pb");
  ExpectInvalid(s, {"'d2h block 3'", "copy.bytes is 12; expected 99968"});
}

TEST(ValidateSchedule, RejectsACopyBetweenTheWrongPlaces) {
  Schedule s = WithOpPatch(Zo2(), "h2d block 1", R"pb(copy { direction: DEVICE_TO_HOST })pb");
  ExpectInvalid(s, {"'h2d block 1'", "the kind of stream 'h2d' is H2D; expected D2H for this op"});
}

// 4. Collectives.

TEST(ValidateSchedule, RejectsAnAllGatherWhoseSendDisagreesWithItsParticipants) {
  Schedule s = WithOpPatch(Sliced(), "all-gather block 1",
                           R"pb(collective { send { size_bytes: 4 } })pb", 1);
  ExpectInvalid(s, {"'all-gather block 1' (device 1", "collective send / recv sizes is 4 / "
                    "199936 bytes", "for ALL_GATHER among 2 participants"});
}

TEST(ValidateSchedule, RejectsAnAllGatherThatIsNotInPlace) {
  Schedule s = Sliced();
  OpNamed(s, "all-gather losses", 1).mutable_collective()->mutable_send()->set_offset_bytes(0);
  ExpectInvalid(s, {"'all-gather losses' (device 1", "an all-gather is in place, rank 1 sends its "
                    "chunk of recv"});
}

// 5. Streams and buffers.

TEST(ValidateSchedule, RejectsAnOpOnAStreamOfAnotherKind) {
  Schedule s = Zo2();
  OpNamed(s, "h2d block 0").set_stream("compute");
  ExpectInvalid(s, {"'h2d block 0'", "the kind of stream 'compute' is COMPUTE; expected H2D"});
}

TEST(ValidateSchedule, RejectsParameterBuffersThatDoNotPersist) {
  Schedule s = Zo2();
  BufferNamed(s, "local/params").set_persistent(false);
  // The structural rules see it first: the store is read before any write.
  ExpectInvalid(s, {"buffer 'local/params'", "declare the buffer persistent"});
}

TEST(ValidateSchedule, RejectsPlacementsOfPartialOrOverlappingParts) {
  Schedule s = Zo2();
  Patch(BufferNamed(s, "d0/resident"), R"pb(params { part: HEAD_PART offset_bytes: 0 })pb");
  ExpectInvalid(s, {"buffer 'd0/resident' params[2]", "holds elements [0, +0) of HEAD_PART; "
                    "expected the whole part"});
}

TEST(ValidateSchedule, RejectsADeviceWhosePartsHaveNoHome) {
  Schedule s = Zo2();
  BufferNamed(s, "local/params").clear_params();
  ExpectInvalid(s, {"device 0: DECODER_BLOCK 0 has no home"});
}

// 6. Dataflow and losses.

TEST(ValidateSchedule, RejectsAParameterUpdatedTwiceInAStep) {
  Schedule s = Lowered(MEZO);
  Op again = OpNamed(s, "update embedding");
  again.set_id(1000);
  again.set_name("update embedding again");
  *s.add_ops() = again;
  ExpectInvalid(s, {"'update embedding again'", "updates elements [0, 41088) of EMBEDDING_PART, "
                    "which the device already updated this step"});
}

TEST(ValidateSchedule, RejectsLossesComputedTwiceOrNever) {
  Schedule s = Sliced();
  // Device 1's + path runs device 0's examples: examples 0 and 1 get two +
  // losses, examples 2 and 3 none.
  for (Op& op : *s.mutable_ops()) {
    if (op.device() == 1 && op.has_compute() && op.compute().sign() == PLUS) {
      op.mutable_compute()->set_first_example(0);
    }
  }
  ExpectInvalid(s, {"receives the + loss of example 0 twice", "'head+ loss'"});
}

TEST(ValidateSchedule, RejectsAGradientThatReadsTooFewLosses) {
  Schedule s = WithOpPatch(Zo2(), "projected gradient",
                           R"pb(compute { losses { size_bytes: 8 } })pb");
  ExpectInvalid(s, {"'projected gradient'", "compute.losses is 'd0/losses' [0, +8)", "covering the"});
}

}  // namespace
}  // namespace zosched
