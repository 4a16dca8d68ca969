#include "schedule/validate_ops.h"

#include <algorithm>
#include <array>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_format.h"
#include "base/status_macros.h"
#include "models/accounting.h"
#include "models/model_spec.h"
#include "schedule/cluster_lookup.h"
#include "schedule/compute_op_model.h"
#include "schedule/describe_op.h"
#include "schedule/first_order_model.h"
#include "schedule/loss_layout.h"
#include "schedule/param_homes.h"

namespace zosched {
namespace {

// "op 3 'fwd+ block 0' (device 0, stream compute): FIELD is FOUND; expected
// EXPECTED".
template <typename... Args>
absl::Status OpError(const Op& op, absl::string_view field, const absl::AlphaNum& found,
                     const absl::FormatSpec<Args...>& expected, const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(DescribeOp(op), ": ", field, " is ",
                                                 found.Piece(), "; expected ",
                                                 absl::StrFormat(expected, args...)));
}

std::string RangeText(const BufferRange& r) {
  return absl::StrFormat("'%s' [%d, +%d)", r.buffer(), r.offset_bytes(), r.size_bytes());
}

// The name of `link_class`, or its number when it names none (proto3 enums
// are open: a file may hold any number).
std::string LinkClassText(LinkClass link_class) {
  return LinkClass_IsValid(link_class) ? LinkClass_Name(link_class) : absl::StrCat(link_class);
}

bool IsForward(ComputeKind kind) {
  return kind == EMBED || kind == BLOCK_FORWARD || kind == HEAD_LOSS;
}

// kName: the role names which elements the op works on without reading them.
enum Access { kRead = 1, kWrite = 2, kReadWrite = 3, kName = 4 };

// The roles of a compute op, by name, with how the kind accesses each (0:
// the kind does not use it).
struct Role {
  absl::string_view name;
  bool set;
  const BufferRange* range;
  int access;
};

// First-order kinds that process a micro-batch (examples, seq_len set).
bool IsFirstOrderPass(ComputeKind kind) {
  return IsFirstOrderKind(kind) && kind != GRAD_ACCUMULATE && kind != OPTIMIZER_STEP;
}

constexpr int kRoles = 13;

std::array<Role, kRoles> Roles(const ComputeOp& c) {
  const ComputeKind k = c.kind();
  const bool params_read = k == UPDATE || k == EMBED || k == BLOCK_FORWARD || k == HEAD_LOSS ||
                           (k == CAST && c.cast_direction() == COMPUTE_TO_WIRE) ||
                           k == TRAIN_EMBED || k == TRAIN_BLOCK_FORWARD || k == TRAIN_HEAD_LOSS ||
                           k == HEAD_BACKWARD || k == BLOCK_BACKWARD || k == OPTIMIZER_STEP;
  const bool params_written =
      k == UPDATE || (k == CAST && c.cast_direction() == WIRE_TO_COMPUTE) || k == OPTIMIZER_STEP;
  const bool params_named = k == EMBED_BACKWARD || k == GRAD_ACCUMULATE;
  const bool head = k == HEAD_LOSS || k == TRAIN_HEAD_LOSS || k == HEAD_BACKWARD;
  int activations = 0;
  if (k == EMBED || k == TRAIN_EMBED) activations = kWrite;
  if (k == BLOCK_FORWARD || k == TRAIN_BLOCK_FORWARD || k == HEAD_BACKWARD || k == BLOCK_BACKWARD) {
    activations = kReadWrite;
  }
  if (k == HEAD_LOSS || k == TRAIN_HEAD_LOSS || k == EMBED_BACKWARD) activations = kRead;
  const bool gradients = k == HEAD_BACKWARD || k == BLOCK_BACKWARD || k == EMBED_BACKWARD ||
                         k == GRAD_ACCUMULATE || k == OPTIMIZER_STEP;
  return {{
      {"compute.params", c.has_params(), &c.params().range(),
       (params_read ? kRead : 0) | (params_written ? kWrite : 0) | (params_named ? kName : 0)},
      {"compute.lm_head", c.has_lm_head(), &c.lm_head().range(), head ? kRead : 0},
      {"compute.perturbed", c.has_perturbed(), &c.perturbed(), IsForward(k) ? kWrite : 0},
      {"compute.activations", c.has_activations(), &c.activations(), activations},
      {"compute.workspace", c.has_workspace(), &c.workspace(),
       IsForward(k) || (k == BLOCK_BACKWARD && c.recompute()) ? kWrite : 0},
      {"compute.saved", c.has_saved(), &c.saved(),
       k == TRAIN_BLOCK_FORWARD || k == TRAIN_HEAD_LOSS ? kWrite
       : k == HEAD_BACKWARD                             ? kReadWrite
       : k == BLOCK_BACKWARD                            ? kRead
                                                        : 0},
      {"compute.gradients", c.has_gradients(), &c.gradients(),
       !gradients            ? 0
       : k == OPTIMIZER_STEP ? kRead
                             : kWrite},
      {"compute.optimizer_state", c.has_optimizer_state(), &c.optimizer_state(),
       k == OPTIMIZER_STEP ? kReadWrite : 0},
      {"compute.bucket", c.has_bucket(), &c.bucket(), k == GRAD_ACCUMULATE ? kRead : 0},
      // Only with FP32 master weights (BF16_FP32_GRADS): CheckCompute asks.
      {"compute.master", c.has_master(), &c.master(), k == OPTIMIZER_STEP ? kReadWrite : 0},
      {"compute.losses", c.has_losses(), &c.losses(),
       k == HEAD_LOSS            ? kWrite
       : k == PROJECTED_GRADIENT ? kRead
                                 : 0},
      {"compute.zo_state", c.has_zo_state(), &c.zo_state(),
       k == UPDATE               ? kRead
       : k == PROJECTED_GRADIENT ? kWrite
                                 : 0},
      {"compute.wire", c.has_wire(), &c.wire(),
       k == CAST ? (c.cast_direction() == WIRE_TO_COMPUTE ? kRead : kWrite) : 0},
  }};
}

// True if the union of `ranges` covers `r`.
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
    if (x.buffer() == r.buffer()) spans.emplace_back(x.offset_bytes(), x.offset_bytes() + x.size_bytes());
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

class OpChecker {
 public:
  explicit OpChecker(const Schedule& s)
      : s_(s),
        model_(s.model()),
        counts_(CountModel(s.model())),
        t_(s.training()),
        layers_(s.model().num_layers()),
        first_order_(IsFirstOrder(s.strategy().kind())) {
    for (int b = 0; b < s.buffers_size(); ++b) buffer_index_[s.buffers(b).name()] = b;
    device_hosts_.reserve(s.devices_size());
    for (const ScheduleDevice& d : s.devices()) {
      device_hosts_.push_back(&FindDevice(s.cluster(), d.cluster_device())->host());
    }
  }

  absl::Status Run() {
    RETURN_IF_ERROR(CheckStreams());
    RETURN_IF_ERROR(CheckBuffers());
    for (const Op& op : s_.ops()) {
      if (op.has_compute()) RETURN_IF_ERROR(CheckCompute(op));
      if (op.has_copy()) RETURN_IF_ERROR(CheckCopy(op));
      if (op.has_collective()) RETURN_IF_ERROR(CheckCollective(op));
      if (!op.has_compute() && !op.has_copy() && !op.has_collective()) {
        return InvalidArgument("%s has no kind (expected compute, copy or collective)", DescribeOp(op));
      }
    }
    RETURN_IF_ERROR(CheckDataflow());
    if (first_order_) return absl::OkStatus();
    ASSIGN_OR_RETURN(const std::vector<LossLayout> layouts, AllLossLayouts(s_));
    std::vector<std::vector<const Op*>> gradients(s_.devices_size());  // in op order
    for (const Op& op : s_.ops()) {
      if (op.has_compute() && op.compute().kind() == PROJECTED_GRADIENT) {
        gradients[op.device()].push_back(&op);
      }
    }
    const std::vector<absl::StatusOr<DeviceParamHomes>> homes = AllParamHomes(s_);
    for (int d = 0; d < s_.devices_size(); ++d) {
      RETURN_IF_ERROR(CheckLosses(d, layouts[d], gradients[d]));
      RETURN_IF_ERROR(homes[d].status());
    }
    return absl::OkStatus();
  }

 private:
  const Buffer* Find(const std::string& name) const {
    auto it = buffer_index_.find(name);
    return it == buffer_index_.end() ? nullptr : &s_.buffers(it->second);
  }

  absl::Status CheckStreams();
  absl::Status CheckBuffers();
  absl::Status CheckPlacements(const Buffer& buffer);
  absl::Status CheckCompute(const Op& op);
  absl::Status CheckFields(const Op& op);
  absl::Status CheckFirstOrderFields(const Op& op);
  // An op over one micro-batch: `examples` is the micro-batch and they lie
  // inside the batch.
  absl::Status CheckMicroBatch(const Op& op);
  // The sizes of the first-order roles (saved, gradients, bucket, optimizer
  // state, master, the recompute workspace).
  absl::Status CheckFirstOrderRoles(const Op& op);
  // A role's range: its buffer exists on the op's device with `kind` and
  // `dtype`, the range lies inside it, and its size is `exact` bytes (when
  // exact >= 0) or at least `at_least`. Messages name the role `role` +
  // `role_suffix`.
  absl::Status CheckRole(const Op& op, absl::string_view role, const BufferRange& r,
                         BufferKind kind, DType dtype, int64_t exact, int64_t at_least,
                         absl::string_view role_suffix = "");
  // A parameter operand: part, block and elements valid (the whole part when
  // `whole`), and its buffer holds those elements at that range.
  absl::Status CheckParams(const Op& op, absl::string_view role, const ParamOperand& p,
                           bool whole);
  absl::Status CheckCopy(const Op& op);
  absl::Status CheckCollective(const Op& op);
  absl::Status CheckDataflow();
  // `gradients`: the device's PROJECTED_GRADIENT ops, in op order.
  absl::Status CheckLosses(int device, const LossLayout& layout,
                           const std::vector<const Op*>& gradients);

  const Schedule& s_;
  const ModelSpec& model_;
  const ModelCounts counts_;  // CountModel(model_)
  const TrainingSettings& t_;
  const int layers_;
  // A first-order schedule (simulated only): its own kinds, buffers and
  // sharded placements; no ZO state, losses or parameter homes.
  const bool first_order_;
  absl::flat_hash_map<absl::string_view, int> buffer_index_;
  // Per device: the host of its cluster device.
  std::vector<const std::string*> device_hosts_;
};

absl::Status OpChecker::CheckStreams() {
  for (const ScheduleDevice& d : s_.devices()) {
    int compute = 0;
    for (const Stream& stream : d.streams()) compute += stream.kind() == COMPUTE;
    if (compute != 1) {
      return InvalidArgument("device %d has %d COMPUTE streams; expected exactly one (compute ops of a "
                     "device run in one order)",
                     d.id(), compute);
    }
  }
  for (const Op& op : s_.ops()) {
    StreamKind wanted = STREAM_KIND_UNSPECIFIED;
    if (op.has_compute()) wanted = COMPUTE;
    if (op.has_collective()) wanted = COLLECTIVE;
    if (op.has_copy()) {
      switch (op.copy().direction()) {
        case HOST_TO_DEVICE: wanted = H2D; break;
        case DEVICE_TO_HOST: wanted = D2H; break;
        case DEVICE_TO_DEVICE: wanted = PEER; break;
        default:
          return OpError(op, "copy.direction", CopyDirection_Name(op.copy().direction()),
                         "HOST_TO_DEVICE, DEVICE_TO_HOST or DEVICE_TO_DEVICE");
      }
    }
    // The structure checks found the stream, named once on its device.
    StreamKind found = STREAM_KIND_UNSPECIFIED;
    for (const Stream& stream : s_.devices(op.device()).streams()) {
      if (stream.name() == op.stream()) found = stream.kind();
    }
    if (wanted != STREAM_KIND_UNSPECIFIED && found != wanted) {
      return OpError(op, absl::StrCat("the kind of stream '", op.stream(), "'"),
                     StreamKind_Name(found), "%s for this op", StreamKind_Name(wanted));
    }
  }
  return absl::OkStatus();
}

absl::Status OpChecker::CheckBuffers() {
  // The strategy decides which kinds of buffers make sense at all.
  for (const Buffer& b : s_.buffers()) {
    const bool first_order_kind = b.kind() >= GRADIENTS && b.kind() <= COMM_BUCKET;
    const bool zo_kind = b.kind() == HOST_PARAMS || b.kind() == WIRE_STAGING ||
                         b.kind() == LOSSES || b.kind() == ZO_STATE ||
                         b.kind() == PERTURBED_WEIGHTS;
    if (first_order_ ? zo_kind : first_order_kind) {
      return InvalidArgument(
          "buffer '%s' is a %s buffer, which %s schedules do not have (strategy %s)", b.name(),
          BufferKind_Name(b.kind()), first_order_ ? "first-order" : "ZO",
          StrategyKind_Name(s_.strategy().kind()));
    }
  }
  std::vector<int> zo_states(s_.devices_size(), 0);
  for (const Buffer& b : s_.buffers()) {
    // Proto3 enums are open: a file may hold any number.
    if (b.kind() == BUFFER_KIND_UNSPECIFIED || b.dtype() == DTYPE_UNSPECIFIED ||
        !BufferKind_IsValid(b.kind()) || !DType_IsValid(b.dtype())) {
      return InvalidArgument("buffer '%s': kind %s (%d), dtype %s (%d); both must be set", b.name(),
                     BufferKind_Name(b.kind()), b.kind(), DType_Name(b.dtype()), b.dtype());
    }
    const bool host = b.device() < 0;
    if (host != (b.kind() == HOST_PARAMS)) {
      return InvalidArgument("buffer '%s' is a %s buffer in %s; HOST_PARAMS buffers live in host memory "
                     "(device -1) and every other kind on a device",
                     b.name(), BufferKind_Name(b.kind()), host ? "host memory" : "a device");
    }
    const bool carries = b.kind() == HOST_PARAMS || b.kind() == RESIDENT_PARAMS ||
                         b.kind() == ZO_STATE || b.kind() == OPTIMIZER_STATE ||
                         b.kind() == MASTER_WEIGHTS;
    if (carries && !b.persistent()) {
      return InvalidArgument("buffer '%s' (%s) is not persistent; its contents carry over from step to "
                     "step, so it must be",
                     b.name(), BufferKind_Name(b.kind()));
    }
    if (b.kind() == ZO_STATE) ++zo_states[b.device()];
    RETURN_IF_ERROR(CheckPlacements(b));
  }
  for (int d = 0; d < s_.devices_size() && !first_order_; ++d) {
    if (zo_states[d] != 1) {
      return InvalidArgument("device %d has %d ZO_STATE buffers; expected exactly one (its pending "
                     "update)",
                     d, zo_states[d]);
    }
  }
  return absl::OkStatus();
}

absl::Status OpChecker::CheckPlacements(const Buffer& buffer) {
  if (buffer.params_size() == 0) return absl::OkStatus();
  if (buffer.kind() != HOST_PARAMS && buffer.kind() != RESIDENT_PARAMS) {
    return InvalidArgument("buffer '%s' (%s) has parameter placements; only HOST_PARAMS and "
                   "RESIDENT_PARAMS buffers hold parameters from step to step",
                   buffer.name(), BufferKind_Name(buffer.kind()));
  }
  const int64_t bytes = DTypeBytes(buffer.dtype());
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (int i = 0; i < buffer.params_size(); ++i) {
    const ParamPlacement& p = buffer.params(i);
    const std::string where = absl::StrFormat("buffer '%s' params[%d]", buffer.name(), i);
    if (p.part() == PART_UNSPECIFIED) return InvalidArgument("%s: part is not set", where);
    const int block_limit = p.part() == DECODER_BLOCK ? layers_ : 1;
    if (p.block() < 0 || p.block() >= block_limit) {
      return InvalidArgument("%s: block is %d; expected %s", where, p.block(),
                     p.part() == DECODER_BLOCK
                         ? absl::StrFormat("0 to %d (the model has %d layers)", layers_ - 1, layers_)
                         : std::string("0 for the ") + Part_Name(p.part()));
    }
    const int64_t part = PartElements(counts_, p.part());
    // First-order schedules shard parts (ZERO_3); ZO buffers hold whole parts.
    const bool fits = first_order_ ? p.first_element() >= 0 && p.elements() >= 1 &&
                                         p.first_element() <= part - p.elements()
                                   : p.first_element() == 0 && p.elements() == part;
    if (!fits) {
      return InvalidArgument("%s: holds elements [%d, +%d) of %s; expected %s [0, +%d)", where,
                             p.first_element(), p.elements(), Part_Name(p.part()),
                             first_order_ ? "a non-empty range inside" : "the whole part,", part);
    }
    const int64_t elements = p.elements();
    if (p.offset_bytes() < 0 || p.offset_bytes() % bytes != 0 ||
        p.offset_bytes() > buffer.size_bytes() ||
        elements * bytes > buffer.size_bytes() - p.offset_bytes()) {
      return InvalidArgument("%s: %d bytes at offset %d do not fit the buffer's %d bytes (or the offset "
                     "is not a multiple of the %s element)",
                     where, elements * bytes, p.offset_bytes(), buffer.size_bytes(),
                     DType_Name(buffer.dtype()));
    }
    spans.emplace_back(p.offset_bytes(), p.offset_bytes() + elements * bytes);
  }
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i) {
    if (spans[i].first < spans[i - 1].second) {
      return InvalidArgument("buffer '%s': parameter placements overlap at bytes [%d, %d)", buffer.name(),
                     spans[i].first, std::min(spans[i].second, spans[i - 1].second));
    }
  }
  return absl::OkStatus();
}

absl::Status OpChecker::CheckRole(const Op& op, absl::string_view role_prefix,
                                  const BufferRange& r, BufferKind kind, DType dtype,
                                  int64_t exact, int64_t at_least, absl::string_view role_suffix) {
  auto role = [&] { return absl::StrCat(role_prefix, role_suffix); };
  const Buffer* b = Find(r.buffer());
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

absl::Status OpChecker::CheckParams(const Op& op, absl::string_view role, const ParamOperand& p,
                                    bool whole) {
  if (p.part() == PART_UNSPECIFIED) {
    return OpError(op, absl::StrCat(role, ".part"), "PART_UNSPECIFIED",
                   "EMBEDDING_PART, DECODER_BLOCK or HEAD_PART");
  }
  if (p.part() == DECODER_BLOCK ? (p.block() < 0 || p.block() >= layers_) : p.block() != 0) {
    return OpError(op, absl::StrCat(role, ".block"), p.block(), "%s",
                   p.part() == DECODER_BLOCK
                       ? absl::StrFormat("0 to %d (model '%s' has %d layers)", layers_ - 1,
                                         model_.name(), layers_)
                       : std::string("0 for the ") + Part_Name(p.part()));
  }
  const int64_t part = PartElements(counts_, p.part());
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
  const Buffer* b = Find(p.range().buffer());
  const BufferKind kind = b != nullptr && b->kind() == BLOCK_SLOT ? BLOCK_SLOT : RESIDENT_PARAMS;
  // Device parameters are in the compute dtype; a first-order schedule's in
  // its recipe's (the training host_dtype).
  const DType dtype = first_order_ ? t_.host_dtype() : t_.compute_dtype();
  const int64_t c = DTypeBytes(dtype);
  RETURN_IF_ERROR(CheckRole(op, role, p.range(), kind, dtype, p.elements() * c, 0, ".range"));
  if (kind == BLOCK_SLOT) {
    // ZO slots hold one block; first-order ones (gathered units) any part.
    if ((!first_order_ && p.part() != DECODER_BLOCK) ||
        p.range().offset_bytes() != p.first_element() * c) {
      return OpError(op, absl::StrCat(role, ".range.offset_bytes"), p.range().offset_bytes(),
                     "%d: a slot holds one %s, element i at byte i·%d", p.first_element() * c,
                     first_order_ ? "unit" : "DECODER_BLOCK", c);
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

absl::Status OpChecker::CheckFields(const Op& op) {
  const ComputeOp& c = op.compute();
  const ComputeKind k = c.kind();
  if (k == COMPUTE_KIND_UNSPECIFIED || !ComputeKind_IsValid(k)) {
    return OpError(op, "compute.kind", absl::StrCat(k), "a ComputeKind");
  }
  if (IsFirstOrderKind(k) != first_order_) {
    return OpError(op, "compute.kind", ComputeKind_Name(k), "a kind of %s schedules (strategy %s)",
                   first_order_ ? "first-order" : "ZO", StrategyKind_Name(s_.strategy().kind()));
  }
  // Only a BLOCK_BACKWARD recomputes, and then as the strategy says.
  const bool recompute = k == BLOCK_BACKWARD && s_.strategy().recompute();
  if (c.recompute() != recompute) {
    return OpError(op, "compute.recompute", c.recompute() ? "true" : "false",
                   "%s (strategy.recompute %s)", recompute ? "true" : "false",
                   s_.strategy().recompute() ? "true" : "false");
  }
  if (IsFirstOrderKind(k)) return CheckFirstOrderFields(op);
  if (IsForward(k) ? (c.sign() != PLUS && c.sign() != MINUS) : c.sign() != SIGN_UNSPECIFIED) {
    return OpError(op, "compute.sign", Sign_Name(c.sign()), "%s",
                   IsForward(k) ? "PLUS or MINUS" : "unset for this kind");
  }
  const int seq = IsForward(k) ? t_.seq_len() : 0;
  if (c.seq_len() != seq) {
    return OpError(op, "compute.seq_len", c.seq_len(), "%d (%s)", seq,
                   IsForward(k) ? "the training seq_len" : "unset for this kind");
  }
  if (IsForward(k)) {
    RETURN_IF_ERROR(CheckMicroBatch(op));
  } else {
    const int examples = k == PROJECTED_GRADIENT ? t_.batch_size() : 0;
    if (c.examples() != examples || c.first_example() != 0) {
      return OpError(op, "compute.examples / first_example",
                     absl::StrFormat("%d / %d", c.examples(), c.first_example()), "%d / 0 (%s)",
                     examples, k == PROJECTED_GRADIENT ? "the batch" : "unset for this kind");
    }
  }
  if ((k == CAST) != (c.cast_direction() != CAST_DIRECTION_UNSPECIFIED)) {
    return OpError(op, "compute.cast_direction", CastDirection_Name(c.cast_direction()), "%s",
                   k == CAST ? "WIRE_TO_COMPUTE or COMPUTE_TO_WIRE" : "unset for this kind");
  }
  return absl::OkStatus();
}

absl::Status OpChecker::CheckFirstOrderFields(const Op& op) {
  const ComputeOp& c = op.compute();
  const ComputeKind k = c.kind();
  if (c.sign() != SIGN_UNSPECIFIED || c.cast_direction() != CAST_DIRECTION_UNSPECIFIED) {
    return OpError(op, "compute.sign / cast_direction",
                   absl::StrCat(Sign_Name(c.sign()), " / ", CastDirection_Name(c.cast_direction())),
                   "unset for %s", ComputeKind_Name(k));
  }
  const bool pass = IsFirstOrderPass(k);
  if (c.seq_len() != (pass ? t_.seq_len() : 0)) {
    return OpError(op, "compute.seq_len", c.seq_len(), "%d (%s)", pass ? t_.seq_len() : 0,
                   pass ? "the training seq_len" : "unset for this kind");
  }
  if (!pass) {
    if (c.examples() != 0 || c.first_example() != 0) {
      return OpError(op, "compute.examples / first_example",
                     absl::StrFormat("%d / %d", c.examples(), c.first_example()),
                     "0 / 0 (unset for %s)", ComputeKind_Name(k));
    }
    return absl::OkStatus();
  }
  return CheckMicroBatch(op);
}

absl::Status OpChecker::CheckMicroBatch(const Op& op) {
  const ComputeOp& c = op.compute();
  if (c.examples() != t_.micro_batch_size()) {
    return OpError(op, "compute.examples", c.examples(), "%d, the training micro_batch_size",
                   t_.micro_batch_size());
  }
  if (c.first_example() < 0 || c.first_example() > t_.batch_size() - c.examples()) {
    return OpError(op, "compute.first_example", c.first_example(),
                   "0 to %d (the op's %d examples lie inside the batch of %d)",
                   t_.batch_size() - c.examples(), c.examples(), t_.batch_size());
  }
  return absl::OkStatus();
}

absl::Status OpChecker::CheckFirstOrderRoles(const Op& op) {
  const ComputeOp& c = op.compute();
  const ComputeKind k = c.kind();
  const int64_t n = c.params().elements();
  const int64_t mb = t_.micro_batch_size(), seq = t_.seq_len();
  const Strategy& strategy = s_.strategy();
  if (c.has_saved()) {
    const int64_t saved =
        k == TRAIN_HEAD_LOSS || k == HEAD_BACKWARD
            ? HeadSavedBytes(model_, mb, seq)
            : BlockSavedBytes(model_, mb, seq, strategy.flash_attention(), strategy.recompute());
    RETURN_IF_ERROR(
        CheckRole(op, "compute.saved", c.saved(), SAVED_ACTIVATIONS, DTYPE_UNSPECIFIED, saved, 0));
  }
  if (c.has_gradients()) {
    // Under ZERO_2/3 a backward writes its unit's whole gradient into a
    // COMM_BUCKET, from which it is reduce-scattered into the shard.
    const Buffer* b = Find(c.gradients().buffer());
    const bool staged = ShardsGradients(strategy.kind()) && k != OPTIMIZER_STEP &&
                        k != GRAD_ACCUMULATE && b != nullptr && b->kind() == COMM_BUCKET;
    RETURN_IF_ERROR(CheckRole(op, "compute.gradients", c.gradients(),
                              staged ? COMM_BUCKET : GRADIENTS, FP32, n * 4, 0));
  }
  if (c.has_bucket()) {
    RETURN_IF_ERROR(CheckRole(op, "compute.bucket", c.bucket(), COMM_BUCKET, FP32, n * 4, 0));
  }
  if (c.has_optimizer_state()) {
    RETURN_IF_ERROR(CheckRole(op, "compute.optimizer_state", c.optimizer_state(), OPTIMIZER_STATE,
                              FP32, n * 8, 0));
  }
  if (c.has_master()) {
    RETURN_IF_ERROR(CheckRole(op, "compute.master", c.master(), MASTER_WEIGHTS, FP32, n * 4, 0));
  }
  if (c.has_workspace()) {
    RETURN_IF_ERROR(CheckRole(op, "compute.workspace", c.workspace(), WORKSPACE, t_.compute_dtype(),
                              -1,
                              BlockRecomputeBytes(model_, mb, seq, strategy.flash_attention())));
  }
  return absl::OkStatus();
}

absl::Status OpChecker::CheckCompute(const Op& op) {
  RETURN_IF_ERROR(CheckFields(op));
  const ComputeOp& c = op.compute();
  const ComputeKind k = c.kind();
  const DType compute = t_.compute_dtype();
  const std::array<Role, kRoles> roles = Roles(c);
  for (const Role& role : roles) {
    const absl::string_view name = role.name;
    const bool wanted = role.access != 0 &&
                        (name != "compute.lm_head" || model_.tied_lm_head()) &&
                        (name != "compute.master" || t_.host_dtype() != FP32);
    if (role.set != wanted) {
      return OpError(
          op, role.name, role.set ? "set" : "unset", "%s for %s%s", wanted ? "set" : "unset",
          ComputeKind_Name(k),
          name == "compute.lm_head"
              ? (model_.tied_lm_head() ? " with a tied LM head" : " without a tied LM head")
          : name == "compute.master"
              ? absl::StrCat(" with ", DType_Name(t_.host_dtype()), " parameters")
              : "");
    }
  }
  if (c.has_params()) {
    const bool any_range = k == UPDATE || k == CAST || k == GRAD_ACCUMULATE || k == OPTIMIZER_STEP;
    RETURN_IF_ERROR(CheckParams(op, "compute.params", c.params(), !any_range));
    const Part wanted = k == EMBED || k == TRAIN_EMBED || k == EMBED_BACKWARD ? EMBEDDING_PART
                        : k == HEAD_LOSS || k == TRAIN_HEAD_LOSS || k == HEAD_BACKWARD ? HEAD_PART
                        : any_range ? c.params().part()
                                    : DECODER_BLOCK;
    if (c.params().part() != wanted) {
      return OpError(op, "compute.params.part", Part_Name(c.params().part()), "%s for %s",
                     Part_Name(wanted), ComputeKind_Name(k));
    }
  }
  if (c.has_lm_head()) {
    RETURN_IF_ERROR(CheckParams(op, "compute.lm_head", c.lm_head(), false));
    if (c.lm_head().part() != EMBEDDING_PART || c.lm_head().first_element() != 0 ||
        c.lm_head().elements() != TokenTableElements(model_)) {
      return OpError(op, "compute.lm_head",
                     absl::StrFormat("%s elements [%d, +%d)", Part_Name(c.lm_head().part()),
                                     c.lm_head().first_element(), c.lm_head().elements()),
                     "the token table, EMBEDDING_PART elements [0, +%d)",
                     TokenTableElements(model_));
    }
  }
  if (c.has_perturbed()) {
    RETURN_IF_ERROR(CheckRole(op, "compute.perturbed", c.perturbed(), PERTURBED_WEIGHTS, compute,
                              -1, PerturbedBytes(model_, counts_, t_, k)));
  }
  if (c.has_activations()) {
    RETURN_IF_ERROR(CheckRole(op, "compute.activations", c.activations(), ACTIVATIONS, compute,
                              MicroBatchActivationBytes(model_, t_), 0));
  }
  if (c.has_workspace()) {
    RETURN_IF_ERROR(CheckRole(op, "compute.workspace", c.workspace(), WORKSPACE, compute, -1,
                              WorkspaceBytes(model_, t_, k)));
  }
  if (c.has_losses()) {
    RETURN_IF_ERROR(CheckRole(op, "compute.losses", c.losses(), LOSSES, FP32,
                              k == HEAD_LOSS ? c.examples() * kLossBytes : -1, kLossBytes));
    if (c.losses().offset_bytes() % kLossBytes != 0 || c.losses().size_bytes() % kLossBytes != 0) {
      return OpError(op, "compute.losses", RangeText(c.losses()),
                     "a range of whole fp32 losses (offset and size multiples of 4)");
    }
  }
  if (c.has_zo_state()) {
    RETURN_IF_ERROR(CheckRole(op, "compute.zo_state", c.zo_state(), ZO_STATE, DTYPE_UNSPECIFIED,
                              kZoStateBytes, 0));
  }
  if (c.has_wire()) {
    const int64_t wb = DTypeBytes(t_.wire_dtype());
    RETURN_IF_ERROR(CheckRole(op, "compute.wire", c.wire(), WIRE_STAGING, t_.wire_dtype(),
                              c.params().elements() * wb, 0));
    if (c.wire().offset_bytes() != c.params().first_element() * wb) {
      return OpError(op, "compute.wire.offset_bytes", c.wire().offset_bytes(),
                     "%d: a staging buffer holds the slot's elements at the wire dtype, element "
                     "i at byte i·%d",
                     c.params().first_element() * wb, wb);
    }
  }
  if (first_order_) RETURN_IF_ERROR(CheckFirstOrderRoles(op));
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
  const ComputeCost cost = ComputeOpCost(model_, counts_, t_, c);
  if (c.flops() != cost.flops) {
    return OpError(op, "compute.flops", c.flops(), "%d, what the model and training settings "
                   "give (schedule/compute_op_model.h)", cost.flops);
  }
  if (c.bytes_accessed() != cost.bytes_accessed) {
    return OpError(op, "compute.bytes_accessed", c.bytes_accessed(),
                   "%d, what the model and training settings give (schedule/compute_op_model.h)",
                   cost.bytes_accessed);
  }
  return absl::OkStatus();
}

absl::Status OpChecker::CheckCopy(const Op& op) {
  const CopyOp& c = op.copy();
  if (!c.has_src() || !c.has_dst()) {
    return OpError(op, "copy.src / copy.dst", "unset", "both set");
  }
  const Buffer* src = Find(c.src().buffer());
  const Buffer* dst = Find(c.dst().buffer());
  const std::string& host = *device_hosts_[op.device()];
  auto on_host = [&](const Buffer* b) { return b->device() < 0 && b->host() == host; };
  auto on_device = [&](const Buffer* b, int d) { return b->device() == d; };
  switch (c.direction()) {
    case HOST_TO_DEVICE:
      if (!on_host(src) || !on_device(dst, op.device())) {
        return OpError(op, "copy.src / copy.dst", absl::StrCat(RangeText(c.src()), " -> ", RangeText(c.dst())),
                       "a buffer in host '%s' memory copied into device %d", host, op.device());
      }
      break;
    case DEVICE_TO_HOST:
      if (!on_device(src, op.device()) || !on_host(dst)) {
        return OpError(op, "copy.src / copy.dst", absl::StrCat(RangeText(c.src()), " -> ", RangeText(c.dst())),
                       "a buffer of device %d copied into host '%s' memory", op.device(), host);
      }
      break;
    default:
      if (c.peer_device() == op.device() || !on_device(src, op.device()) ||
          !on_device(dst, c.peer_device())) {
        return OpError(op, "copy.src / copy.dst", absl::StrCat(RangeText(c.src()), " -> ", RangeText(c.dst())),
                       "a buffer of device %d copied into one of peer_device %d (another device)",
                       op.device(), c.peer_device());
      }
  }
  if (c.src_dtype() != src->dtype() || c.dst_dtype() != dst->dtype()) {
    return OpError(op, "copy.src_dtype / dst_dtype",
                   absl::StrCat(DType_Name(c.src_dtype()), " / ", DType_Name(c.dst_dtype())),
                   "%s / %s, the dtypes of buffers '%s' and '%s'", DType_Name(src->dtype()),
                   DType_Name(dst->dtype()), src->name(), dst->name());
  }
  if (c.direction() == DEVICE_TO_DEVICE && c.src_dtype() != c.dst_dtype()) {
    return OpError(op, "copy.dst_dtype", DType_Name(c.dst_dtype()),
                   "%s: a peer copy does not convert", DType_Name(c.src_dtype()));
  }
  const int64_t sb = DTypeBytes(c.src_dtype()), db = DTypeBytes(c.dst_dtype());
  if (c.src().size_bytes() % sb != 0 || c.dst().size_bytes() % db != 0 ||
      c.src().size_bytes() / sb != c.dst().size_bytes() / db) {
    return OpError(op, "copy sizes",
                   absl::StrFormat("%d bytes of %s -> %d bytes of %s", c.src().size_bytes(),
                                   DType_Name(c.src_dtype()), c.dst().size_bytes(),
                                   DType_Name(c.dst_dtype())),
                   "whole elements, as many in dst as in src");
  }
  const int64_t elements = c.src().size_bytes() / sb;
  const int64_t wire = c.direction() == HOST_TO_DEVICE ? db : sb;
  if (c.bytes() != elements * wire) {
    return OpError(op, "copy.bytes", c.bytes(),
                   "%d: %d elements at the device side's %d bytes each", elements * wire, elements,
                   wire);
  }
  if (c.link_class() == LINK_CLASS_UNSPECIFIED || !LinkClass_IsValid(c.link_class())) {
    return OpError(op, "copy.link_class", LinkClassText(c.link_class()), "the class of the link crossed");
  }
  if (!Covered(c.src(), op.reads()) || !Covered(c.dst(), op.writes())) {
    return OpError(op, "reads / writes", "incomplete", "reads to cover copy.src %s and writes to cover copy.dst %s",
                   RangeText(c.src()), RangeText(c.dst()));
  }
  return absl::OkStatus();
}

absl::Status OpChecker::CheckCollective(const Op& op) {
  const CollectiveOp& c = op.collective();
  if (!c.has_send() || !c.has_recv()) {
    return OpError(op, "collective.send / recv", "unset", "both set");
  }
  const Buffer* send = Find(c.send().buffer());
  const Buffer* recv = Find(c.recv().buffer());
  if (send->device() != op.device() || recv->device() != op.device() ||
      send->dtype() != recv->dtype()) {
    return OpError(op, "collective.send / recv",
                   absl::StrCat(RangeText(c.send()), " / ", RangeText(c.recv())),
                   "buffers of the op's device %d with one dtype", op.device());
  }
  const int64_t n = c.participants_size();
  const int64_t rank =
      std::find(c.participants().begin(), c.participants().end(), op.device()) -
      c.participants().begin();
  const int64_t in = c.send().size_bytes(), out = c.recv().size_bytes();
  int64_t wanted_in = in, wanted_out = out, bytes = out;
  switch (c.kind()) {
    case ALL_GATHER:
      wanted_out = n * in;
      break;
    case REDUCE_SCATTER:
      wanted_in = n * out;
      bytes = in;
      break;
    case ALL_REDUCE:
    case BROADCAST:
      wanted_out = in;
      break;
    default:
      return OpError(op, "collective.kind", CollectiveKind_Name(c.kind()), "a CollectiveKind");
  }
  if (in != wanted_in || out != wanted_out) {
    return OpError(op, "collective send / recv sizes", absl::StrFormat("%d / %d bytes", in, out),
                   "%d / %d bytes for %s among %d participants", wanted_in, wanted_out,
                   CollectiveKind_Name(c.kind()), n);
  }
  if (c.bytes() != bytes) {
    return OpError(op, "collective.bytes", c.bytes(), "%d for %s with these send and recv ranges",
                   bytes, CollectiveKind_Name(c.kind()));
  }
  // ZO runtimes gather in place; first-order schedules (simulated) may
  // gather a shard into another buffer, as FSDP does.
  if (c.kind() == ALL_GATHER && !first_order_ &&
      (c.send().buffer() != c.recv().buffer() ||
       c.send().offset_bytes() != c.recv().offset_bytes() + rank * in)) {
    return OpError(op, "collective.send", RangeText(c.send()),
                   "'%s' [%d, +%d): an all-gather is in place, rank %d sends its chunk of recv",
                   c.recv().buffer(), c.recv().offset_bytes() + rank * in, in, rank);
  }
  if (c.link_class() == LINK_CLASS_UNSPECIFIED || !LinkClass_IsValid(c.link_class())) {
    return OpError(op, "collective.link_class", LinkClassText(c.link_class()),
                   "the class of the links crossed");
  }
  // Reads and writes may leave out padding that travels but nobody reads
  // (the tail of a block's last slice), so they lie inside send and recv
  // rather than cover them.
  for (const auto& [field, ranges, outer] :
       {std::make_tuple("a read", &op.reads(), &c.send()),
        std::make_tuple("a write", &op.writes(), &c.recv())}) {
    for (const BufferRange& r : *ranges) {
      if (r.buffer() != outer->buffer() || r.offset_bytes() < outer->offset_bytes() ||
          r.offset_bytes() + r.size_bytes() > outer->offset_bytes() + outer->size_bytes()) {
        return OpError(op, field, RangeText(r), "a range inside collective.%s %s",
                       outer == &c.send() ? "send" : "recv", RangeText(*outer));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status OpChecker::CheckDataflow() {
  // One residual stream: where it is, and how far it has come.
  struct Path {
    Sign sign;
    int first_example, examples;
    int next_block;  // the block it goes through next; layers_ when done
    const Op* last;
  };
  // Per device: elements of each (part, block) updated so far in the step.
  std::vector<absl::flat_hash_map<std::pair<int, int>, std::vector<std::pair<int64_t, int64_t>>>>
      updated(s_.devices_size());
  std::vector<absl::flat_hash_map<std::pair<absl::string_view, int64_t>, Path>> paths(
      s_.devices_size());
  for (const Op& op : s_.ops()) {
    if (!op.has_compute()) continue;
    const ComputeOp& c = op.compute();
    if (c.kind() == UPDATE) {
      auto& spans = updated[op.device()][{c.params().part(), c.params().block()}];
      const int64_t b = c.params().first_element(), e = b + c.params().elements();
      for (const auto& [ub, ue] : spans) {
        if (b < ue && ub < e) {
          return InvalidArgument("%s updates elements [%d, %d) of %s, which the device already "
                         "updated this step (each parameter takes one update per step)",
                         DescribeOp(op), std::max(b, ub), std::min(e, ue),
                         DescribePart(c.params().part(), c.params().block()));
        }
      }
      spans.emplace_back(b, e);
      continue;
    }
    if (!IsForward(c.kind())) continue;
    const std::pair<absl::string_view, int64_t> key(c.activations().buffer(),
                                                    c.activations().offset_bytes());
    auto& device_paths = paths[op.device()];
    if (c.kind() == EMBED) {
      device_paths[key] = {c.sign(), c.first_example(), c.examples(), 0, &op};
      continue;
    }
    auto it = device_paths.find(key);
    const int wanted_block = c.kind() == HEAD_LOSS ? layers_ : c.params().block();
    if (it == device_paths.end()) {
      return InvalidArgument("%s reads the residual stream %s, which no EMBED of the device started "
                     "before it",
                     DescribeOp(op), RangeText(c.activations()));
    }
    Path& path = it->second;
    if (path.sign != c.sign() || path.first_example != c.first_example() ||
        path.examples != c.examples()) {
      return InvalidArgument("%s: sign %s, examples [%d, +%d); but the residual stream %s it continues "
                     "is the %s path of examples [%d, +%d) (from %s); check the op's sign and "
                     "examples",
                     DescribeOp(op), Sign_Name(c.sign()), c.first_example(), c.examples(),
                     RangeText(c.activations()), Sign_Name(path.sign), path.first_example,
                     path.examples, DescribeOp(*path.last));
    }
    if (path.next_block != wanted_block) {
      return InvalidArgument("%s: the residual stream %s has passed blocks 0 to %d (last %s), so the "
                     "next op on it must be %s",
                     DescribeOp(op), RangeText(c.activations()), path.next_block - 1,
                     DescribeOp(*path.last),
                     path.next_block == layers_
                         ? std::string("its HEAD_LOSS")
                         : absl::StrFormat("the BLOCK_FORWARD of block %d", path.next_block));
    }
    path.next_block += c.kind() == BLOCK_FORWARD;
    path.last = &op;
  }
  return absl::OkStatus();
}

absl::Status OpChecker::CheckLosses(int device, const LossLayout& layout,
                                    const std::vector<const Op*>& gradients) {
  if (gradients.size() > 1) {
    return InvalidArgument("device %d has two PROJECTED_GRADIENT ops, %s and %s; expected one per step",
                   device, DescribeOp(*gradients[0]), DescribeOp(*gradients[1]));
  }
  if (gradients.empty()) {
    return InvalidArgument("device %d has no PROJECTED_GRADIENT op; every device computes g each step",
                   device);
  }
  const Op* gradient = gradients[0];
  const BufferRange& read = gradient->compute().losses();
  const std::string& name = s_.buffers(layout.buffer).name();
  for (const std::vector<int64_t>* side : {&layout.plus, &layout.minus}) {
    for (size_t e = 0; e < side->size(); ++e) {
      const int64_t at = (*side)[e] * kLossBytes;
      if (read.buffer() != name || at < read.offset_bytes() ||
          at + kLossBytes > read.offset_bytes() + read.size_bytes()) {
        return OpError(*gradient, "compute.losses", RangeText(read),
                       "a range of '%s' covering the %s loss of example %d at byte %d", name,
                       side == &layout.plus ? "+" : "-", e, at);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateOpSemantics(const Schedule& schedule) { return OpChecker(schedule).Run(); }

}  // namespace zosched
