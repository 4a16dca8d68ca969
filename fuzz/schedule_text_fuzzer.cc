// libFuzzer target: any bytes as a Schedule textproto (a .pbtxt schedule
// file), parsed and validated as every tool does before it touches the
// schedule (base/textproto.h, schedule/validate.h). The contract under test
// (DESIGN.md section 3): a file can make a tool print an error, never crash
// it; a schedule that passes holds only defined enum values.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/check.h"
#include "base/textproto.h"
#include "fuzz/known_enums.h"
#include "schedule/schedule.pb.h"
#include "schedule/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  zosched::Schedule schedule;
  if (!zosched::ParseTextProto(text, "fuzz.pbtxt", &schedule).ok()) return 0;
  if (!zosched::ValidateSchedule(schedule).ok()) return 0;
  CHECK(zosched::FirstUnknownEnum(schedule).empty()) << zosched::FirstUnknownEnum(schedule);
  return 0;
}
