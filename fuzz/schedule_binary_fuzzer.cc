// libFuzzer target: any bytes as a binary Schedule (what ReadProtoFile,
// base/proto_file.h, parses for a file not named .pbtxt), then validated as
// every tool does before it touches the schedule (schedule/validate.h). The
// contract under test (DESIGN.md section 3): a file can make a tool print an
// error, never crash it; a schedule that passes holds only defined enum
// values.
#include <cstddef>
#include <cstdint>

#include "base/check.h"
#include "fuzz/known_enums.h"
#include "schedule/schedule.pb.h"
#include "schedule/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  zosched::Schedule schedule;
  if (!schedule.ParseFromArray(data, static_cast<int>(size))) return 0;
  if (!zosched::ValidateSchedule(schedule).ok()) return 0;
  CHECK(zosched::FirstUnknownEnum(schedule).empty()) << zosched::FirstUnknownEnum(schedule);
  return 0;
}
