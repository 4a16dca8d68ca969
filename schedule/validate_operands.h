// The op checks every family of schedule shares (schedule/validate_ops.h runs
// them): a compute op's kind, which of its operand roles are set, each
// role's range (its buffer's device, kind and dtype, inside the buffer, its
// size), its parameter operands against the buffers holding them, its
// reads and writes against its roles, and its costs against
// schedule/compute_op_model.h; and how every op check words its errors.
// What the families hold their ops to beyond this lives in
// schedule/validate_zo_ops.h and schedule/validate_first_order_ops.h; where
// the shared checks differ between them, an OpFamily says.
//
// Units: bytes for ranges and buffer sizes, elements for parameter
// operands.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "models/accounting.h"
#include "models/model.pb.h"
#include "schedule/describe_op.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// "op 3 'fwd+ block 0' (device 0, stream compute): FIELD is FOUND; expected
// EXPECTED".
template <typename... Args>
absl::Status OpError(const Op& op, absl::string_view field, const absl::AlphaNum& found,
                     const absl::FormatSpec<Args...>& expected, const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(DescribeOp(op), ": ", field, " is ", found.Piece(),
                                                 "; expected ",
                                                 absl::StrFormat(expected, args...)));
}

// "'BUFFER' [OFFSET, +SIZE)".
std::string RangeText(const BufferRange& r);

// True if the union of `ranges` covers `r`.
bool Covered(const BufferRange& r, const google::protobuf::RepeatedPtrField<BufferRange>& ranges);

class OperandChecker;
struct RoleAccesses;

// Where the checks every schedule gets differ between the families: ZO
// (MEZO, ZO2, DISTZO2) and first-order (the AdamW baselines, simulated
// only). Each family's op checks define its one instance.
struct OpFamily {
  // As messages name the family: "ZO" or "first-order".
  absl::string_view name;
  // True for the compute kinds of its ops.
  bool (*has_compute_kind)(ComputeKind kind);
  // True for the buffer kinds only the other family has.
  bool (*foreign_buffer_kind)(BufferKind kind);
  // A ParamPlacement may hold any non-empty range of its part (first-order
  // schedules shard parts, ZERO_3), not only the whole part (ZO).
  bool shards_placements;
  // Every device has exactly one ZO_STATE buffer, its pending update (ZO).
  bool one_zo_state_per_device;
  // The dtype of parameters in device buffers: the training compute_dtype
  // (ZO) or the recipe's, the training host_dtype (first-order).
  DType (*param_dtype)(const TrainingSettings& training);
  // A BLOCK_SLOT may hold a unit of any part (first-order: gathered units),
  // not only a DECODER_BLOCK (ZO).
  bool slots_hold_any_part;
  // What one slot holds, as messages say: "DECODER_BLOCK" or "unit".
  absl::string_view slot_content;
  // An ALL_GATHER runs in place, each rank sending its chunk of recv (the ZO
  // runtimes); otherwise it may gather a shard into another buffer, as FSDP
  // does.
  bool gathers_in_place;

  // A compute op's fields other than its kind and roles: sign, seq_len,
  // examples, cast_direction.
  absl::Status (*check_fields)(const OperandChecker& operands, const Op& op);
  // How a compute op accesses each operand role (a role may depend on the
  // model: a rotary model's EMBED perturbs nothing).
  RoleAccesses (*role_accesses)(const OperandChecker& operands, const ComputeOp& op);
  // The part whose every element a compute op of `kind` computes with;
  // nullopt where it may take any range of any part.
  std::optional<Part> (*whole_params_part)(ComputeKind kind);
  // The roles of a compute op other than params and lm_head: each range's
  // buffer kind, dtype and size as its kind needs it.
  absl::Status (*check_roles)(const OperandChecker& operands, const Op& op);
};

// How an op accesses the range of one of its operand roles. kName: the role
// names which elements the op works on without reading them.
enum RoleAccess : int { kUnused = 0, kRead = 1, kWrite = 2, kReadWrite = 3, kName = 4 };

// How a compute op accesses each operand role (schedule.proto ComputeOp),
// each a combination of RoleAccess values; kUnused where its kind does not
// have the role.
struct RoleAccesses {
  int params = kUnused;
  int lm_head = kUnused;
  int perturbed = kUnused;
  int activations = kUnused;
  int workspace = kUnused;
  int saved = kUnused;
  int gradients = kUnused;
  int optimizer_state = kUnused;
  int bucket = kUnused;
  int master = kUnused;  // only with parameters other than FP32 (CheckCompute)
  int losses = kUnused;
  int zo_state = kUnused;
  int wire = kUnused;
  int adapters = kUnused;
};

// The checks of one schedule's ops that both families share. The schedule's
// model, training settings and cluster must be valid and it must pass
// ValidateScheduleStructure; it and `family` must outlive the checker.
// Errors: InvalidArgument, worded by OpError.
class OperandChecker {
 public:
  OperandChecker(const Schedule& schedule, const OpFamily& family);

  const Schedule& schedule() const { return schedule_; }
  const ModelSpec& model() const { return schedule_.model(); }
  const ModelCounts& counts() const { return counts_; }
  const TrainingSettings& training() const { return schedule_.training(); }
  const OpFamily& family() const { return family_; }
  // The buffer named `name`, or nullptr.
  const Buffer* FindBuffer(absl::string_view name) const {
    const auto it = buffer_index_.find(name);
    return it == buffer_index_.end() ? nullptr : &schedule_.buffers(it->second);
  }

  // Returns OK if the compute op `op` means what it says, checked in this
  // order: its kind (CheckKind); its fields (the family's check_fields);
  // exactly the roles the family's role_accesses gives it (lm_head only with
  // a tied LM head, master only with parameters other than FP32); its params
  // (CheckComputeParams of the family's whole_params_part) and lm_head
  // (CheckLmHead); its other roles (the family's check_roles); each set
  // role's range covered by the reads where it is read and by the writes
  // where it is written; its costs (CheckCost).
  absl::Status CheckCompute(const Op& op) const;

  // For the families' checks:
  // An op over one micro-batch: compute.examples the training
  // micro_batch_size, [first_example, +examples) inside the batch.
  absl::Status CheckMicroBatch(const Op& op) const;
  // A role's range: its buffer exists on the op's device with `kind` and
  // `dtype` (any when DTYPE_UNSPECIFIED), the range lies inside it, and its
  // size is `exact` bytes (when exact >= 0) and at least `at_least`.
  // Messages name the role `role` + `role_suffix`.
  absl::Status CheckRole(const Op& op, absl::string_view role, const BufferRange& r,
                         BufferKind kind, DType dtype, int64_t exact, int64_t at_least,
                         absl::string_view role_suffix = "") const;
  // compute.activations, when set: one micro-batch's residual stream
  // (MicroBatchActivationBytes) in an ACTIVATIONS buffer of the compute
  // dtype.
  absl::Status CheckActivations(const Op& op) const;

 private:
  // compute.kind a ComputeKind of the family; compute.recompute true exactly
  // for a BLOCK_BACKWARD when strategy.recompute is.
  absl::Status CheckKind(const Op& op) const;
  // A parameter operand: part, block and elements valid (the whole part when
  // `whole`), and its range where its buffer holds those elements (its
  // ParamPlacement, or element i at byte i·dtype of a slot), in the
  // family's parameter dtype.
  absl::Status CheckParams(const Op& op, absl::string_view role, const ParamOperand& p,
                           bool whole) const;
  // compute.params: a parameter operand holding the whole of `whole_part`,
  // or, when it is nullopt, any range of any part.
  absl::Status CheckComputeParams(const Op& op, std::optional<Part> whole_part) const;
  // compute.lm_head, when set: the whole token table (TokenTableElements).
  absl::Status CheckLmHead(const Op& op) const;
  // compute.adapters, when set: the whole ADAPTER_PART of the params' block.
  absl::Status CheckAdapters(const Op& op) const;
  // compute.flops and bytes_accessed equal to ComputeOpCost.
  absl::Status CheckCost(const Op& op) const;

  const Schedule& schedule_;
  const OpFamily& family_;
  const ModelCounts counts_;  // CountModel(schedule_.model(), its training's peft)
  const int layers_;
  absl::flat_hash_map<absl::string_view, int> buffer_index_;
};

}  // namespace zosched
