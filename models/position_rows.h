// Where a model's learned position table starts being read. OPT
// (LEARNED_OPT_OFFSET) keeps two rows before position 0's (a fairseq
// legacy: embed_positions has max_positions + 2 rows), so position p reads
// row p + 2; a plain LEARNED table reads row p.
#pragma once

#include <cstdint>

#include "models/model.pb.h"

namespace zosched {

// The row of the position table that position 0 reads: 2 for
// LEARNED_OPT_OFFSET, 0 for any other positional encoding (rows, not
// elements: a row is hidden_size elements).
int64_t FirstPositionRow(const ModelSpec& spec);

}  // namespace zosched
