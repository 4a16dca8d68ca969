// How error messages name an op and a model part.
#pragma once

#include <string>

#include "schedule/schedule.pb.h"

namespace zosched {

// "op 12 'h2d block 3' (device 0, stream h2d)".
std::string DescribeOp(const Op& op);

// "DECODER_BLOCK 3", "EMBEDDING_PART".
std::string DescribePart(Part part, int block);

}  // namespace zosched
