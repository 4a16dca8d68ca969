#include "base/status_macros.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace zosched {
namespace {

absl::Status FailIfNegative(int x) {
  if (x < 0) return absl::InvalidArgumentError("negative");
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<int>> MakeBoxed(int x) {
  RETURN_IF_ERROR(FailIfNegative(x));
  return std::make_unique<int>(x);
}

absl::StatusOr<int> Unbox(int x) {
  ASSIGN_OR_RETURN(std::unique_ptr<int> boxed, MakeBoxed(x));
  int doubled = 0;
  ASSIGN_OR_RETURN(auto again, MakeBoxed(*boxed + 1));
  doubled = *boxed + *again;
  return doubled;
}

TEST(StatusMacros, PassesValuesThrough) {
  absl::StatusOr<int> r = Unbox(3);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 7);
}

TEST(StatusMacros, ReturnsTheFirstError) {
  absl::StatusOr<int> r = Unbox(-1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "negative");
}

}  // namespace
}  // namespace zosched
