#include "schedule/sweep_variants.h"

#include <algorithm>

namespace zosched {

std::vector<SweepVariant> SweepVariants(int devices, const ModelSpec& model) {
  std::vector<SweepVariant> variants;
  LowerOptions base;
  base.training = DefaultTrainingSettings();
  base.training.set_batch_size(2 * devices);
  base.training.set_seq_len(std::min<int64_t>(2048, model.max_positions()));
  base.strategy = MEZO;
  variants.push_back({"mezo", base});
  base.strategy = ZO2;
  variants.push_back({"zo2", base});
  if (devices >= 2) {
    base.strategy = DISTZO2;
    base.pertp = 1;
    base.dp = devices;
    variants.push_back({"distzo2 P1 sliced", base});
    if (devices % 2 == 0) {
      base.pertp = 2;
      base.dp = devices / 2;
      variants.push_back({"distzo2 P2 sliced", base});
      base.slicing = false;
      variants.push_back({"distzo2 P2 naive", base});
    }
  }
  return variants;
}

}  // namespace zosched
