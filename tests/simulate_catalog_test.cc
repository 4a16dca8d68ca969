// `simulate` works on every schedule `lower` produces for the catalog: every
// strategy, every zoo model, every catalog cluster where the plan fits.
#include "gtest/gtest.h"
#include "sim/simulator.h"
#include "tests/catalog_lowerings.h"

namespace zosched {
namespace {

TEST(SimulateCatalog, EveryLoweredScheduleSimulates) {
  int simulated = 0;
  ASSERT_NO_FATAL_FAILURE(ForEachCatalogLowering([&](const CatalogLowering& l) {
    const absl::StatusOr<Schedule>& s = l.schedule;
    if (!s.ok()) return;  // does not fit: lowering_sweep_test checks the error
    const std::string& what = l.what;
    absl::StatusOr<SimResult> r = Simulate(*s);
    ASSERT_TRUE(r.ok()) << what << ": " << r.status();
    ASSERT_EQ(r->timeline.ops_size(), s->ops_size()) << what;
    const int64_t step_ns = r->timeline.steps(0).end_ns();
    EXPECT_GT(step_ns, 0) << what;
    for (const OpInterval& o : r->timeline.ops()) {
      ASSERT_LE(0, o.start_ns()) << what;
      ASSERT_LE(o.start_ns(), o.end_ns()) << what;
      ASSERT_LE(o.end_ns(), step_ns) << what;
    }
    ++simulated;
  }));
  EXPECT_GT(simulated, 100);
}

}  // namespace
}  // namespace zosched
