// Appending buffers, ops and edges to a Schedule, and the small value types
// (byte ranges, parameter operands) ops are made of. Used by lowering; no
// checks beyond what the types need: ValidateSchedule judges the result.
#pragma once

#include <cstdint>
#include <string>

#include "models/model.pb.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// Bytes [offset, offset + size) of `buffer`.
BufferRange Range(const std::string& buffer, int64_t offset_bytes, int64_t size_bytes);

// Elements [first, first + count) of `part` (block `block`), stored in `range`.
ParamOperand Params(Part part, int block, int64_t first, int64_t count, const BufferRange& range);

// Which parameters a buffer holds from byte `offset_bytes` on.
ParamPlacement Placement(Part part, int block, int64_t elements, int64_t offset_bytes);

class ScheduleBuilder {
 public:
  explicit ScheduleBuilder(Schedule* schedule) : schedule_(schedule) {}

  // Adds a buffer on device `device`, or in host memory of `host` when
  // `device` is -1; returns it (protobuf's repeated fields never move their
  // elements, so the pointer stays valid while the schedule lives).
  Buffer* AddBuffer(const std::string& name, BufferKind kind, int device,
                    const std::string& host, int64_t size_bytes, DType dtype,
                    bool persistent);

  // Adds an op with the next id on (device, stream); returns it (valid while
  // the schedule lives).
  Op* AddOp(int device, const std::string& stream, const std::string& name);

  // `to` waits for `from` (nothing when `from` is null or both are on one
  // stream, which orders them already).
  void AddEdge(const Op* from, const Op* to);

  // Records `range` as read (written) by `op`, for validation's
  // happens-before checks.
  static void Reads(Op* op, const BufferRange& range) { *op->add_reads() = range; }
  static void Writes(Op* op, const BufferRange& range) { *op->add_writes() = range; }

 private:
  Schedule* schedule_;
};

}  // namespace zosched
