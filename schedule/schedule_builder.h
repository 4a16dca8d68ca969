// Appending buffers, ops and edges to a Schedule, and the small value types
// (byte ranges, parameter operands) ops are made of. Used by lowering; no
// checks beyond what the types need: ValidateSchedule judges the result.
//
// Lowering computes ranges and operands as plain values (ByteRange,
// ParamRange) and writes each into the schedule once (Set, Reads, Writes):
// a schedule holds thousands of them, and a temporary BufferRange message
// per value would cost a heap string and a message copy each.
#pragma once

#include <cstdint>
#include <string>

#include "models/model.pb.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// Bytes [offset_bytes, offset_bytes + size_bytes) of the buffer named
// `*buffer`. The name is borrowed: it must outlive the value.
struct ByteRange {
  const std::string* buffer = nullptr;
  int64_t offset_bytes = 0;
  int64_t size_bytes = 0;
};

// Bytes [offset, offset + size) of `buffer`.
inline ByteRange Range(const std::string& buffer, int64_t offset_bytes, int64_t size_bytes) {
  return ByteRange{&buffer, offset_bytes, size_bytes};
}
ByteRange Range(std::string&& buffer, int64_t offset_bytes, int64_t size_bytes) = delete;

// Elements [first, first + count) of `part` (block `block`), stored in `range`.
struct ParamRange {
  Part part = PART_UNSPECIFIED;
  int block = 0;
  int64_t first = 0;
  int64_t count = 0;
  ByteRange range;
};

inline ParamRange Params(Part part, int block, int64_t first, int64_t count,
                         const ByteRange& range) {
  return ParamRange{part, block, first, count, range};
}

// Writes `range` into `out` (every field: `out` may hold an older range).
void Set(const ByteRange& range, BufferRange* out);
// Writes `params` into `out` (every field).
void Set(const ParamRange& params, ParamOperand* out);

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

  // Adds an op named `name` with the next id on (device, stream); returns it
  // (valid while the schedule lives).
  Op* AddOp(int device, const char* stream, std::string name);

  // `to` waits for `from` (nothing when `from` is null or both are on one
  // stream, which orders them already).
  void AddEdge(const Op* from, const Op* to);

  // Records `range` as read (written) by `op`, for validation's
  // happens-before checks.
  static void Reads(Op* op, const ByteRange& range) { Set(range, op->add_reads()); }
  static void Writes(Op* op, const ByteRange& range) { Set(range, op->add_writes()); }

 private:
  Schedule* schedule_;
};

}  // namespace zosched
