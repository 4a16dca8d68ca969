// A check the fuzz targets apply to every message a validator accepts:
// every enum field holds a value its enum defines. Proto3 enums are open (a
// file may say `family: 6`), and the backends switch over these fields
// trusting validation (DESIGN.md section 3).
#pragma once

#include <string>

#include "google/protobuf/message.h"

namespace zosched {

// The path of the first enum field of `message` (searched depth first, e.g.
// "cluster.devices[2].peaks[0].dtype") whose value its enum does not define,
// or "" if there is none.
std::string FirstUnknownEnum(const google::protobuf::Message& message);

}  // namespace zosched
