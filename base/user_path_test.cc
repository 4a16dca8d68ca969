#include "base/user_path.h"

#include <cstdlib>

#include "gtest/gtest.h"

namespace zosched {
namespace {

TEST(ResolveUserPath, RelativeToWhereBazelRunWasTyped) {
  setenv("BUILD_WORKING_DIRECTORY", "/home/me/zosched", 1);
  EXPECT_EQ(ResolveUserPath("clusters/mine.pbtxt"),
            "/home/me/zosched/clusters/mine.pbtxt");
  EXPECT_EQ(ResolveUserPath("/abs/x.pbtxt"), "/abs/x.pbtxt");
}

TEST(ResolveUserPath, UnchangedWhenStartedDirectly) {
  unsetenv("BUILD_WORKING_DIRECTORY");
  EXPECT_EQ(ResolveUserPath("x.pbtxt"), "x.pbtxt");
}

}  // namespace
}  // namespace zosched
