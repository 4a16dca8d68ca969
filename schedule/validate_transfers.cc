#include "schedule/validate_transfers.h"

#include <algorithm>
#include <cstdint>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "models/model_spec.h"
#include "schedule/cluster_lookup.h"

namespace zosched {
namespace {

// The name of `link_class`, or its number when it names none (proto3 enums
// are open: a file may hold any number).
std::string LinkClassText(LinkClass link_class) {
  return LinkClass_IsValid(link_class) ? LinkClass_Name(link_class) : absl::StrCat(link_class);
}

}  // namespace

TransferChecker::TransferChecker(const OperandChecker& operands) : operands_(operands) {
  const Schedule& s = operands.schedule();
  device_hosts_.reserve(s.devices_size());
  for (const ScheduleDevice& d : s.devices()) {
    device_hosts_.push_back(&FindDevice(s.cluster(), d.cluster_device())->host());
  }
}

absl::Status TransferChecker::CheckCopy(const Op& op) const {
  const CopyOp& c = op.copy();
  if (!c.has_src() || !c.has_dst()) {
    return OpError(op, "copy.src / copy.dst", "unset", "both set");
  }
  const Buffer* src = operands_.FindBuffer(c.src().buffer());
  const Buffer* dst = operands_.FindBuffer(c.dst().buffer());
  const std::string& host = *device_hosts_[op.device()];
  auto on_host = [&](const Buffer* b) { return b->device() < 0 && b->host() == host; };
  auto on_device = [&](const Buffer* b, int d) { return b->device() == d; };
  switch (c.direction()) {
    case HOST_TO_DEVICE:
      if (!on_host(src) || !on_device(dst, op.device())) {
        return OpError(op, "copy.src / copy.dst",
                       absl::StrCat(RangeText(c.src()), " -> ", RangeText(c.dst())),
                       "a buffer in host '%s' memory copied into device %d", host, op.device());
      }
      break;
    case DEVICE_TO_HOST:
      if (!on_device(src, op.device()) || !on_host(dst)) {
        return OpError(op, "copy.src / copy.dst",
                       absl::StrCat(RangeText(c.src()), " -> ", RangeText(c.dst())),
                       "a buffer of device %d copied into host '%s' memory", op.device(), host);
      }
      break;
    default:
      if (c.peer_device() == op.device() || !on_device(src, op.device()) ||
          !on_device(dst, c.peer_device())) {
        return OpError(op, "copy.src / copy.dst",
                       absl::StrCat(RangeText(c.src()), " -> ", RangeText(c.dst())),
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
    return OpError(
        op, "copy sizes",
        absl::StrFormat("%d bytes of %s -> %d bytes of %s", c.src().size_bytes(),
                        DType_Name(c.src_dtype()), c.dst().size_bytes(), DType_Name(c.dst_dtype())),
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
    return OpError(op, "copy.link_class", LinkClassText(c.link_class()),
                   "the class of the link crossed");
  }
  if (!Covered(c.src(), op.reads()) || !Covered(c.dst(), op.writes())) {
    return OpError(op, "reads / writes", "incomplete",
                   "reads to cover copy.src %s and writes to cover copy.dst %s", RangeText(c.src()),
                   RangeText(c.dst()));
  }
  return absl::OkStatus();
}

absl::Status TransferChecker::CheckCollective(const Op& op) const {
  const CollectiveOp& c = op.collective();
  if (!c.has_send() || !c.has_recv()) {
    return OpError(op, "collective.send / recv", "unset", "both set");
  }
  const Buffer* send = operands_.FindBuffer(c.send().buffer());
  const Buffer* recv = operands_.FindBuffer(c.recv().buffer());
  if (send->device() != op.device() || recv->device() != op.device() ||
      send->dtype() != recv->dtype()) {
    return OpError(op, "collective.send / recv",
                   absl::StrCat(RangeText(c.send()), " / ", RangeText(c.recv())),
                   "buffers of the op's device %d with one dtype", op.device());
  }
  const int64_t n = c.participants_size();
  const int64_t rank = std::find(c.participants().begin(), c.participants().end(), op.device()) -
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
  if (c.kind() == ALL_GATHER && operands_.family().gathers_in_place &&
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
  for (const auto& [field, ranges, outer] : {std::make_tuple("a read", &op.reads(), &c.send()),
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

}  // namespace zosched
