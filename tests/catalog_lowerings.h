// The catalog sweep of the tests that cover every lowering: each sweep
// variant (schedule/sweep_variants.h) of every zoo model on every catalog
// cluster, lowered.
#pragma once

#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "schedule/schedule.pb.h"
#include "schedule/sweep_variants.h"

namespace zosched {

// One lowering of the sweep.
struct CatalogLowering {
  std::string what;  // "LABEL MODEL on CLUSTER", for messages
  const SweepVariant& variant;
  const absl::StatusOr<Schedule>& schedule;  // LowerSchedule's result
};

// Calls `visit` with each lowering of the sweep: clusters in catalog order,
// then models, then variants. A cluster or model that does not load fails
// the current test fatally; the sweep stops at the first fatal failure (an
// ASSERT in `visit` too), so call it in ASSERT_NO_FATAL_FAILURE to end the
// test there as well.
void ForEachCatalogLowering(absl::FunctionRef<void(const CatalogLowering&)> visit);

}  // namespace zosched
