// The strategy variants that sweeps over the catalog try on a cluster, for
// tests that check every strategy lowers (and simulates) everywhere it fits.
#pragma once

#include <string>
#include <vector>

#include "models/model.pb.h"
#include "schedule/lowering.h"

namespace zosched {

struct SweepVariant {
  std::string label;  // "mezo", "zo2", "distzo2 P1 sliced", "distzo2 P2 sliced",
                      // "distzo2 P2 naive"
  LowerOptions options;
};

// For a cluster with `devices` devices and `model`: MEZO and ZO2 on the
// first device; DISTZO2 over all devices with P = 1 (sliced) and, for an
// even count, P = 2 (sliced and naive). Batch 2 × devices (divisible by
// every D), seq_len min(2048, the model's max_positions), other settings
// DefaultTrainingSettings().
std::vector<SweepVariant> SweepVariants(int devices, const ModelSpec& model);

}  // namespace zosched
