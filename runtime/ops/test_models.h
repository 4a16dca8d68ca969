// Models for the tests of runtime/ops: OPT as the runtime runs it, with and
// without project_in / project_out.
#pragma once

#include "models/model.pb.h"
#include "models/opt_for_test.h"

namespace zosched {

// h = 8, 2 layers, vocab 32, 16 positions; e = `embed_dim` (0: e = h).
inline ModelSpec TestOpt(int embed_dim = 0) {
  ModelSpec spec = OptForTest("ops-test-opt", OptTestSizes{});
  spec.set_word_embed_proj_dim(embed_dim);
  return spec;
}

}  // namespace zosched
