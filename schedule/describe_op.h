// How error messages name an op: "op 12 'h2d block 3' (device 0, stream h2d)".
#pragma once

#include <string>

#include "schedule/schedule.pb.h"

namespace zosched {

std::string DescribeOp(const Op& op);

}  // namespace zosched
