#include "schedule/validate_operands.h"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "base/status_macros.h"
#include "models/model_spec.h"
#include "schedule/compute_op_model.h"

namespace zosched {
namespace {

// One operand role of a compute op: its name in messages, whether it is
// set, its range, and how the op accesses it (RoleAccess values).
struct Role {
  absl::string_view name;
  bool set;
  const BufferRange* range;
  int access;
};

constexpr int kRoles = 14;

// The roles of `c` in the order they are checked, with `access`.
std::array<Role, kRoles> Roles(const ComputeOp& c, const RoleAccesses& access) {
  return {{
      {"compute.params", c.has_params(), &c.params().range(), access.params},
      {"compute.lm_head", c.has_lm_head(), &c.lm_head().range(), access.lm_head},
      {"compute.perturbed", c.has_perturbed(), &c.perturbed(), access.perturbed},
      {"compute.activations", c.has_activations(), &c.activations(), access.activations},
      {"compute.workspace", c.has_workspace(), &c.workspace(), access.workspace},
      {"compute.saved", c.has_saved(), &c.saved(), access.saved},
      {"compute.gradients", c.has_gradients(), &c.gradients(), access.gradients},
      {"compute.optimizer_state", c.has_optimizer_state(), &c.optimizer_state(),
       access.optimizer_state},
      {"compute.bucket", c.has_bucket(), &c.bucket(), access.bucket},
      {"compute.master", c.has_master(), &c.master(), access.master},
      {"compute.losses", c.has_losses(), &c.losses(), access.losses},
      {"compute.zo_state", c.has_zo_state(), &c.zo_state(), access.zo_state},
      {"compute.wire", c.has_wire(), &c.wire(), access.wire},
      {"compute.adapters", c.has_adapters(), &c.adapters().range(), access.adapters},
  }};
}

// Each role set exactly when its access is not kUnused; lm_head only with a
// tied LM head, master only with parameters other than FP32 (`host_dtype`).
absl::Status CheckRolesPresent(const Op& op, const std::array<Role, kRoles>& roles, bool tied,
                               DType host_dtype) {
  const ComputeKind k = op.compute().kind();
  for (const Role& role : roles) {
    const absl::string_view name = role.name;
    const bool wanted = role.access != kUnused && (name != "compute.lm_head" || tied) &&
                        (name != "compute.master" || host_dtype != FP32);
    if (role.set != wanted) {
      return OpError(
          op, role.name, role.set ? "set" : "unset", "%s for %s%s", wanted ? "set" : "unset",
          ComputeKind_Name(k),
          name == "compute.lm_head"  ? (tied ? " with a tied LM head" : " without a tied LM head")
          : name == "compute.master" ? absl::StrCat(" with ", DType_Name(host_dtype), " parameters")
                                     : "");
    }
  }
  return absl::OkStatus();
}

// Each set role's range covered by the op's reads where the role is read
// and by its writes where it is written.
absl::Status CheckRolesAccessed(const Op& op, const std::array<Role, kRoles>& roles) {
  for (const Role& role : roles) {
    if (!role.set) continue;
    if ((role.access & kRead) && !Covered(*role.range, op.reads())) {
      return OpError(op, absl::StrCat("the reads of ", role.name), "missing",
                     "reads to cover %s, which the op reads", RangeText(*role.range));
    }
    if ((role.access & kWrite) && !Covered(*role.range, op.writes())) {
      return OpError(op, absl::StrCat("the writes of ", role.name), "missing",
                     "writes to cover %s, which the op writes", RangeText(*role.range));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string RangeText(const BufferRange& r) {
  return absl::StrFormat("'%s' [%d, +%d)", r.buffer(), r.offset_bytes(), r.size_bytes());
}

bool Covered(const BufferRange& r, const google::protobuf::RepeatedPtrField<BufferRange>& ranges) {
  // Usually one of them does alone.
  for (const BufferRange& x : ranges) {
    if (x.offset_bytes() <= r.offset_bytes() &&
        x.offset_bytes() + x.size_bytes() >= r.offset_bytes() + r.size_bytes() &&
        x.buffer() == r.buffer()) {
      return true;
    }
  }
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const BufferRange& x : ranges) {
    if (x.buffer() == r.buffer()) {
      spans.emplace_back(x.offset_bytes(), x.offset_bytes() + x.size_bytes());
    }
  }
  std::sort(spans.begin(), spans.end());
  int64_t covered = r.offset_bytes();
  const int64_t end = r.offset_bytes() + r.size_bytes();
  for (const auto& [b, e] : spans) {
    if (b > covered) break;
    covered = std::max(covered, e);
    if (covered >= end) return true;
  }
  return covered >= end;
}

OperandChecker::OperandChecker(const Schedule& schedule, const OpFamily& family)
    : schedule_(schedule),
      family_(family),
      counts_(CountModel(schedule.model(), schedule.training().peft())),
      layers_(schedule.model().num_layers()) {
  for (int b = 0; b < schedule.buffers_size(); ++b) buffer_index_[schedule.buffers(b).name()] = b;
}

absl::Status OperandChecker::CheckCompute(const Op& op) const {
  RETURN_IF_ERROR(CheckKind(op));
  RETURN_IF_ERROR(family_.check_fields(*this, op));
  const ComputeOp& c = op.compute();
  const std::array<Role, kRoles> roles = Roles(c, family_.role_accesses(*this, c));
  RETURN_IF_ERROR(
      CheckRolesPresent(op, roles, model().tied_lm_head(), training().host_dtype()));
  if (c.has_params()) RETURN_IF_ERROR(CheckComputeParams(op, family_.whole_params_part(c.kind())));
  RETURN_IF_ERROR(CheckLmHead(op));
  RETURN_IF_ERROR(CheckAdapters(op));
  RETURN_IF_ERROR(family_.check_roles(*this, op));
  RETURN_IF_ERROR(CheckRolesAccessed(op, roles));
  return CheckCost(op);
}

absl::Status OperandChecker::CheckKind(const Op& op) const {
  const ComputeOp& c = op.compute();
  const ComputeKind k = c.kind();
  if (k == COMPUTE_KIND_UNSPECIFIED || !ComputeKind_IsValid(k)) {
    return OpError(op, "compute.kind", absl::StrCat(k), "a ComputeKind");
  }
  const Strategy& strategy = schedule_.strategy();
  if (!family_.has_compute_kind(k)) {
    return OpError(op, "compute.kind", ComputeKind_Name(k), "a kind of %s schedules (strategy %s)",
                   family_.name, StrategyKind_Name(strategy.kind()));
  }
  // Only a BLOCK_BACKWARD recomputes, and then as the strategy says.
  const bool recompute = k == BLOCK_BACKWARD && strategy.recompute();
  if (c.recompute() != recompute) {
    return OpError(op, "compute.recompute", c.recompute() ? "true" : "false",
                   "%s (strategy.recompute %s)", recompute ? "true" : "false",
                   strategy.recompute() ? "true" : "false");
  }
  return absl::OkStatus();
}

absl::Status OperandChecker::CheckMicroBatch(const Op& op) const {
  const ComputeOp& c = op.compute();
  const TrainingSettings& t = training();
  if (c.examples() != t.micro_batch_size()) {
    return OpError(op, "compute.examples", c.examples(), "%d, the training micro_batch_size",
                   t.micro_batch_size());
  }
  if (c.first_example() < 0 || c.first_example() > t.batch_size() - c.examples()) {
    return OpError(op, "compute.first_example", c.first_example(),
                   "0 to %d (the op's %d examples lie inside the batch of %d)",
                   t.batch_size() - c.examples(), c.examples(), t.batch_size());
  }
  return absl::OkStatus();
}

absl::Status OperandChecker::CheckRole(const Op& op, absl::string_view role_prefix,
                                       const BufferRange& r, BufferKind kind, DType dtype,
                                       int64_t exact, int64_t at_least,
                                       absl::string_view role_suffix) const {
  auto role = [&] { return absl::StrCat(role_prefix, role_suffix); };
  const Buffer* b = FindBuffer(r.buffer());
  if (b == nullptr) {
    return OpError(op, absl::StrCat(role(), ".buffer"), absl::StrCat("'", r.buffer(), "'"),
                   "an existing buffer");
  }
  if (b->device() != op.device()) {
    return OpError(op, role(), RangeText(r), "a buffer on the op's device %d (it is on %s)",
                   op.device(),
                   b->device() < 0 ? "host " + b->host() : absl::StrCat("device ", b->device()));
  }
  if (b->kind() != kind) {
    return OpError(op, absl::StrFormat("the kind of %s buffer '%s'", role(), r.buffer()),
                   BufferKind_Name(b->kind()), "%s", BufferKind_Name(kind));
  }
  if (dtype != DTYPE_UNSPECIFIED && b->dtype() != dtype) {
    return OpError(op, absl::StrFormat("the dtype of %s buffer '%s'", role(), r.buffer()),
                   DType_Name(b->dtype()), "%s", DType_Name(dtype));
  }
  if (r.offset_bytes() < 0 || r.size_bytes() <= 0 || r.offset_bytes() > b->size_bytes() ||
      r.size_bytes() > b->size_bytes() - r.offset_bytes()) {
    return OpError(op, role(), RangeText(r), "a non-empty range inside the buffer's %d bytes",
                   b->size_bytes());
  }
  if (exact >= 0 && r.size_bytes() != exact) {
    return OpError(op, absl::StrCat(role(), ".size_bytes"), r.size_bytes(), "%d", exact);
  }
  if (r.size_bytes() < at_least) {
    return OpError(op, absl::StrCat(role(), ".size_bytes"), r.size_bytes(), "at least %d",
                   at_least);
  }
  return absl::OkStatus();
}

absl::Status OperandChecker::CheckParams(const Op& op, absl::string_view role,
                                         const ParamOperand& p, bool whole) const {
  if (p.part() == PART_UNSPECIFIED) {
    return OpError(op, absl::StrCat(role, ".part"), "PART_UNSPECIFIED",
                   "EMBEDDING_PART, DECODER_BLOCK, HEAD_PART or ADAPTER_PART");
  }
  const bool per_block = p.part() == DECODER_BLOCK || p.part() == ADAPTER_PART;
  if (per_block ? (p.block() < 0 || p.block() >= layers_) : p.block() != 0) {
    return OpError(op, absl::StrCat(role, ".block"), p.block(), "%s",
                   per_block ? absl::StrFormat("0 to %d (model '%s' has %d layers)", layers_ - 1,
                                               model().name(), layers_)
                             : std::string("0 for the ") + Part_Name(p.part()));
  }
  const int64_t part = PartElements(counts_, p.part());
  if (part == 0) {
    return OpError(op, absl::StrCat(role, ".part"), Part_Name(p.part()),
                   "a part the schedule trains (ADAPTER_PART only under training.peft LORA or "
                   "PREFIX)");
  }
  if (p.first_element() < 0 || p.elements() < 1 || p.first_element() > part ||
      p.elements() > part - p.first_element()) {
    return OpError(op, absl::StrCat(role, " elements"),
                   absl::StrFormat("[%d, +%d)", p.first_element(), p.elements()),
                   "a non-empty range inside the %s's %d elements", Part_Name(p.part()), part);
  }
  if (whole && (p.first_element() != 0 || p.elements() != part)) {
    return OpError(op, absl::StrCat(role, " elements"),
                   absl::StrFormat("[%d, +%d)", p.first_element(), p.elements()),
                   "the whole %s, [0, +%d)", Part_Name(p.part()), part);
  }
  const Buffer* b = FindBuffer(p.range().buffer());
  const BufferKind kind = b != nullptr && b->kind() == BLOCK_SLOT ? BLOCK_SLOT : RESIDENT_PARAMS;
  const DType dtype = family_.param_dtype(training());
  const int64_t c = DTypeBytes(dtype);
  RETURN_IF_ERROR(CheckRole(op, role, p.range(), kind, dtype, p.elements() * c, 0, ".range"));
  if (kind == BLOCK_SLOT) {
    if ((!family_.slots_hold_any_part && p.part() != DECODER_BLOCK) ||
        p.range().offset_bytes() != p.first_element() * c) {
      return OpError(op, absl::StrCat(role, ".range.offset_bytes"), p.range().offset_bytes(),
                     "%d: a slot holds one %s, element i at byte i·%d", p.first_element() * c,
                     family_.slot_content, c);
    }
    return absl::OkStatus();
  }
  for (const ParamPlacement& placed : b->params()) {
    if (placed.part() != p.part() || placed.block() != p.block() ||
        p.first_element() < placed.first_element() ||
        p.first_element() + p.elements() > placed.first_element() + placed.elements()) {
      continue;
    }
    const int64_t at = placed.offset_bytes() + (p.first_element() - placed.first_element()) * c;
    if (p.range().offset_bytes() != at) {
      return OpError(op, absl::StrCat(role, ".range.offset_bytes"), p.range().offset_bytes(),
                     "%d, where buffer '%s' holds element %d of %s", at, b->name(),
                     p.first_element(), Part_Name(p.part()));
    }
    return absl::OkStatus();
  }
  return OpError(op, role, DescribePart(p.part(), p.block()),
                 "parameters buffer '%s' holds (it has no placement for them)", b->name());
}

absl::Status OperandChecker::CheckComputeParams(const Op& op,
                                                std::optional<Part> whole_part) const {
  const ComputeOp& c = op.compute();
  RETURN_IF_ERROR(CheckParams(op, "compute.params", c.params(), whole_part.has_value()));
  if (whole_part.has_value() && c.params().part() != *whole_part) {
    return OpError(op, "compute.params.part", Part_Name(c.params().part()), "%s for %s",
                   Part_Name(*whole_part), ComputeKind_Name(c.kind()));
  }
  return absl::OkStatus();
}

absl::Status OperandChecker::CheckLmHead(const Op& op) const {
  const ComputeOp& c = op.compute();
  if (!c.has_lm_head()) return absl::OkStatus();
  RETURN_IF_ERROR(CheckParams(op, "compute.lm_head", c.lm_head(), false));
  if (c.lm_head().part() != EMBEDDING_PART || c.lm_head().first_element() != 0 ||
      c.lm_head().elements() != TokenTableElements(model())) {
    return OpError(op, "compute.lm_head",
                   absl::StrFormat("%s elements [%d, +%d)", Part_Name(c.lm_head().part()),
                                   c.lm_head().first_element(), c.lm_head().elements()),
                   "the token table, EMBEDDING_PART elements [0, +%d)",
                   TokenTableElements(model()));
  }
  return absl::OkStatus();
}

absl::Status OperandChecker::CheckAdapters(const Op& op) const {
  const ComputeOp& c = op.compute();
  if (!c.has_adapters()) return absl::OkStatus();
  RETURN_IF_ERROR(CheckParams(op, "compute.adapters", c.adapters(), /*whole=*/true));
  if (c.adapters().part() != ADAPTER_PART || c.adapters().block() != c.params().block()) {
    return OpError(op, "compute.adapters", DescribePart(c.adapters().part(), c.adapters().block()),
                   "ADAPTER_PART %d, the adapters of the block the op computes",
                   c.params().block());
  }
  return absl::OkStatus();
}

absl::Status OperandChecker::CheckActivations(const Op& op) const {
  const ComputeOp& c = op.compute();
  if (!c.has_activations()) return absl::OkStatus();
  return CheckRole(op, "compute.activations", c.activations(), ACTIVATIONS,
                   training().compute_dtype(), MicroBatchActivationBytes(model(), training()), 0);
}

absl::Status OperandChecker::CheckCost(const Op& op) const {
  const ComputeOp& c = op.compute();
  const ComputeCost cost = ComputeOpCost(model(), counts_, training(), c);
  if (c.flops() != cost.flops) {
    return OpError(op, "compute.flops", c.flops(),
                   "%d, what the model and training settings "
                   "give (schedule/compute_op_model.h)",
                   cost.flops);
  }
  if (c.bytes_accessed() != cost.bytes_accessed) {
    return OpError(op, "compute.bytes_accessed", c.bytes_accessed(),
                   "%d, what the model and training settings give (schedule/compute_op_model.h)",
                   cost.bytes_accessed);
  }
  return absl::OkStatus();
}

}  // namespace zosched
