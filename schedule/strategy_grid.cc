#include "schedule/strategy_grid.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "schedule/training_settings.h"

namespace zosched {

std::string GridName(const StrategyGrid& grid) {
  std::string name = absl::AsciiStrToLower(StrategyKind_Name(grid.strategy));
  if (grid.strategy == DISTZO2) absl::StrAppendFormat(&name, "_P%dxD%d", grid.pertp, grid.dp);
  return name;
}

std::string GridSchemeName(const StrategyGrid& grid) {
  if (grid.strategy != DISTZO2) return GridName(grid);
  return GridName(grid) + (grid.slicing ? "_sliced" : "_naive");
}

LowerOptions GridLowerOptions(const StrategyGrid& grid) {
  LowerOptions o;
  o.strategy = grid.strategy;
  o.pertp = grid.pertp;
  o.dp = grid.dp;
  o.slicing = grid.slicing;
  o.training = DefaultTrainingSettings();
  return o;
}

}  // namespace zosched
