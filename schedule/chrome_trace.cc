#include "schedule/chrome_trace.h"

#include <cstdint>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_format.h"
#include "base/status_macros.h"
#include "schedule/timeline_intervals.h"

namespace zosched {
namespace {

// Process ids are timeline index * kPidsPerTimeline + device.
constexpr int kPidsPerTimeline = 1000;

// `s` as a JSON string literal, quotes included. Bytes >= 0x80 pass through
// (the text is UTF-8, like the protos' strings).
std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// Nanoseconds as microseconds with three decimals, exactly: 1234567 ->
// "1234.567".
std::string Micros(int64_t ns) {
  const uint64_t magnitude =
      ns < 0 ? uint64_t{0} - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  return absl::StrFormat("%s%d.%03d", ns < 0 ? "-" : "", magnitude / 1000,
                         magnitude % 1000);
}

std::string Label(const Timeline& timeline, int index) {
  switch (timeline.source()) {
    case PREDICTED:
      return "predicted";
    case MEASURED:
      return "measured";
    default:
      return absl::StrCat("timeline ", index);
  }
}

// A metadata event: {"ph":"M","pid":..,"tid":..,"name":NAME,"args":{KEY:VALUE}}
// with VALUE already JSON.
std::string Metadata(int pid, int tid, const char* name, const char* key,
                     const std::string& value) {
  return absl::StrFormat(
      R"({"ph":"M","pid":%d,"tid":%d,"name":"%s","args":{"%s":%s}})", pid, tid,
      name, key, value);
}

// The event's "cat" and the op's cost fields as JSON members (each with a
// leading comma).
std::pair<const char*, std::string> CategoryAndCostArgs(const Op& op) {
  switch (op.kind_case()) {
    case Op::kCompute: {
      const ComputeOp& c = op.compute();
      return {"compute",
              absl::StrFormat(R"(,"flops":%d,"bytes_accessed":%d,"kind":%s)",
                              c.flops(), c.bytes_accessed(),
                              Quote(ComputeKind_Name(c.kind())))};
    }
    case Op::kCopy: {
      const CopyOp& c = op.copy();
      return {"copy",
              absl::StrFormat(R"(,"bytes":%d,"direction":%s,"link_class":%s)",
                              c.bytes(), Quote(CopyDirection_Name(c.direction())),
                              Quote(LinkClass_Name(c.link_class())))};
    }
    case Op::kCollective: {
      const CollectiveOp& c = op.collective();
      return {"collective",
              absl::StrFormat(R"(,"bytes":%d,"kind":%s,"key":%s,"participants":[%s])",
                              c.bytes(), Quote(CollectiveKind_Name(c.kind())),
                              Quote(c.key()), absl::StrJoin(c.participants(), ","))};
    }
    default:
      return {"empty", ""};
  }
}

// The index of `op`'s stream among its device's streams.
absl::StatusOr<int> StreamIndex(const Schedule& schedule, const Op& op) {
  if (op.device() < 0 || op.device() >= schedule.devices_size()) {
    return InvalidArgument("op %d '%s' is on device %d, which the schedule lacks",
                   op.id(), op.name(), op.device());
  }
  const auto& streams = schedule.devices(op.device()).streams();
  for (int i = 0; i < streams.size(); ++i) {
    if (streams[i].name() == op.stream()) return i;
  }
  return InvalidArgument("op %d '%s' is on stream '%s', which device %d lacks", op.id(),
                 op.name(), op.stream(), op.device());
}

}  // namespace

absl::StatusOr<std::string> ChromeTraceJson(
    const Schedule& schedule, const std::vector<const Timeline*>& timelines) {
  if (schedule.devices_size() > kPidsPerTimeline) {
    return InvalidArgument("schedule has %d devices; a trace shows at most %d",
                   schedule.devices_size(), kPidsPerTimeline);
  }
  const absl::flat_hash_map<int64_t, const Op*> op_by_id = OpsById(schedule);

  std::vector<std::string> events;
  for (int t = 0; t < static_cast<int>(timelines.size()); ++t) {
    const std::string label = Label(*timelines[t], t);
    for (int d = 0; d < schedule.devices_size(); ++d) {
      const ScheduleDevice& device = schedule.devices(d);
      const int pid = t * kPidsPerTimeline + d;
      events.push_back(Metadata(
          pid, 0, "process_name", "name",
          Quote(absl::StrFormat("%s: device %d (%s)", label, device.id(),
                                device.cluster_device()))));
      events.push_back(Metadata(pid, 0, "process_sort_index", "sort_index",
                                absl::StrCat(pid)));
      for (int s = 0; s < device.streams_size(); ++s) {
        events.push_back(Metadata(pid, s, "thread_name", "name",
                                  Quote(device.streams(s).name())));
        events.push_back(Metadata(pid, s, "thread_sort_index", "sort_index",
                                  absl::StrCat(s)));
      }
    }
  }
  for (int t = 0; t < static_cast<int>(timelines.size()); ++t) {
    for (const OpInterval& interval : timelines[t]->ops()) {
      // An unknown op keeps this wording, which chrome_trace_test pins.
      auto it = op_by_id.find(interval.op_id());
      if (it == op_by_id.end()) {
        return InvalidArgument("%s timeline, step %d: op id %d is not in the schedule",
                       Label(*timelines[t], t), interval.step(), interval.op_id());
      }
      // Device, stream and order, as the other timeline tools check them:
      // "measured: timeline step 1 has op 3 on device 0 stream 'h2d', but ...".
      if (absl::Status status = CheckOpInterval(op_by_id, interval); !status.ok()) {
        return absl::Status(status.code(), absl::StrCat(Label(*timelines[t], t), ": ",
                                                        status.message()));
      }
      const Op& op = *it->second;
      ASSIGN_OR_RETURN(const int tid, StreamIndex(schedule, op));
      const auto [category, cost_args] = CategoryAndCostArgs(op);
      events.push_back(absl::StrFormat(
          R"({"ph":"X","pid":%d,"tid":%d,"name":%s,"cat":"%s","ts":%s,"dur":%s,)"
          R"("args":{"op_id":%d,"step":%d%s}})",
          t * kPidsPerTimeline + op.device(), tid, Quote(op.name()), category,
          Micros(interval.start_ns()),
          Micros(interval.end_ns() - interval.start_ns()), op.id(),
          interval.step(), cost_args));
    }
  }
  return absl::StrCat("{\"traceEvents\":[\n", absl::StrJoin(events, ",\n"),
                      "\n],\"displayTimeUnit\":\"ns\"}\n");
}

}  // namespace zosched
