// Chrome trace JSON (the Trace Event Format that chrome://tracing and
// Perfetto open) from Timelines of a Schedule: one process per device and
// timeline, one thread per stream, one complete ("X") event per op interval
// named like the op ("fwd+ block 17"), with args: op id, step, and the op's
// cost fields (flops, bytes, link class, collective key).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schedule/schedule.pb.h"
#include "schedule/timeline.pb.h"

namespace zosched {

// Returns the JSON text. Several timelines (e.g. predicted and measured)
// appear side by side: each gets its own processes, labelled
// "<label>: device N (<cluster device>)" where label is the timeline's
// source ("predicted", "measured"; "timeline I" when unspecified). Times are
// microseconds (the format's unit) with nanosecond precision.
//
// Layout: pid = timeline index * 1000 + device id, tid = the stream's index
// in its ScheduleDevice's streams; process and thread sort indices keep
// timelines, devices and streams in that order. Every device and stream of
// the schedule gets its process and thread, with or without ops. Event
// "cat" is "compute", "copy" or "collective"; "args" hold op_id, step and
// the cost fields (compute: flops, bytes_accessed, kind; copy: bytes,
// direction, link_class; collective: bytes, kind, key, participants).
//
// Errors: InvalidArgument if a timeline names an op the schedule lacks, puts
// an op on another device or stream than the schedule does, or has an
// interval that ends before it starts (each naming the op id); or if the
// schedule has more than 1000 devices (the pid layout's limit).
absl::StatusOr<std::string> ChromeTraceJson(const Schedule& schedule,
                                            const std::vector<const Timeline*>& timelines);

}  // namespace zosched
