#include "models/position_rows.h"

namespace zosched {

int64_t FirstPositionRow(const ModelSpec& spec) {
  return spec.positional() == LEARNED_OPT_OFFSET ? 2 : 0;
}

}  // namespace zosched
