#include "schedule/schedule_builder.h"

#include <utility>

namespace zosched {

void Set(const ByteRange& range, BufferRange* out) {
  out->set_buffer(*range.buffer);
  out->set_offset_bytes(range.offset_bytes);
  out->set_size_bytes(range.size_bytes);
}

void Set(const ParamRange& params, ParamOperand* out) {
  out->set_part(params.part);
  out->set_block(params.block);
  out->set_first_element(params.first);
  out->set_elements(params.count);
  Set(params.range, out->mutable_range());
}

ParamPlacement Placement(Part part, int block, int64_t elements, int64_t offset_bytes) {
  ParamPlacement p;
  p.set_part(part);
  p.set_block(block);
  p.set_first_element(0);
  p.set_elements(elements);
  p.set_offset_bytes(offset_bytes);
  return p;
}

Buffer* ScheduleBuilder::AddBuffer(const std::string& name, BufferKind kind, int device,
                                   const std::string& host, int64_t size_bytes, DType dtype,
                                   bool persistent) {
  Buffer* b = schedule_->add_buffers();
  b->set_name(name);
  b->set_kind(kind);
  b->set_device(device);
  b->set_host(host);
  b->set_size_bytes(size_bytes);
  b->set_dtype(dtype);
  b->set_persistent(persistent);
  return b;
}

Op* ScheduleBuilder::AddOp(int device, const char* stream, std::string name) {
  Op* op = schedule_->add_ops();
  op->set_id(schedule_->ops_size() - 1);
  op->set_device(device);
  op->set_stream(stream);
  op->set_name(std::move(name));
  return op;
}

void ScheduleBuilder::AddEdge(const Op* from, const Op* to) {
  if (from == nullptr) return;
  if (from->device() == to->device() && from->stream() == to->stream()) return;
  Edge* e = schedule_->add_edges();
  e->set_from(from->id());
  e->set_to(to->id());
}

}  // namespace zosched
