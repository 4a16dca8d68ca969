#include "runtime/launcher.h"

#include "gtest/gtest.h"

namespace zosched {
namespace {

TEST(ArgsWithoutRanks, DropsBothSpellings) {
  const char* argv[] = {"train", "--ranks=4", "--model=m", "--ranks", "2", "--steps=3"};
  EXPECT_EQ(ArgsWithoutRanks(6, const_cast<char**>(argv)),
            (std::vector<std::string>{"--model=m", "--steps=3"}));
}

}  // namespace
}  // namespace zosched
