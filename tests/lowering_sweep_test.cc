// Every strategy lowers for every zoo model on every catalog cluster where it
// fits; where it does not, the error is a memory shortfall that names the
// device or host and by how much.
#include <map>

#include "gtest/gtest.h"
#include "tests/catalog_lowerings.h"

namespace zosched {
namespace {

TEST(LoweringSweep, EveryStrategyModelAndClusterLowersOrNamesTheShortfall) {
  std::map<std::string, int> lowered, too_big;
  ASSERT_NO_FATAL_FAILURE(ForEachCatalogLowering([&](const CatalogLowering& l) {
    const absl::StatusOr<Schedule>& s = l.schedule;
    if (s.ok()) {
      ++lowered[l.variant.label];
      return;
    }
    ASSERT_EQ(s.status().code(), absl::StatusCode::kResourceExhausted)
        << l.what << ": " << s.status();
    EXPECT_NE(s.status().message().find("over by"), std::string::npos)
        << l.what << ": " << s.status();
    ++too_big[l.variant.label];
  }));
  // The sweep is not vacuous: every strategy lowered somewhere.
  for (const char* label : {"mezo", "zo2", "distzo2 P1 sliced", "distzo2 P2 sliced",
                            "distzo2 P2 naive"}) {
    EXPECT_GT(lowered[label], 0) << label;
  }
  EXPECT_GT(too_big["mezo"], 0);  // OPT-175B does not fit one GPU
}

}  // namespace
}  // namespace zosched
