#include "runtime/launcher.h"

#include "gtest/gtest.h"

namespace zosched {
namespace {

TEST(ArgsWithoutRanks, DropsBothSpellings) {
  const char* argv[] = {"train", "--ranks=4", "--model=m", "--ranks", "2", "--steps=3"};
  EXPECT_EQ(ArgsWithoutRanks(6, const_cast<char**>(argv)),
            (std::vector<std::string>{"--model=m", "--steps=3"}));
}

TEST(MpirunArgv, RunsThisProgramWithTheArguments) {
  absl::StatusOr<std::vector<std::string>> argv = MpirunArgv(4, {"--steps=3", "a b"});
  ASSERT_TRUE(argv.ok()) << argv.status();
  ASSERT_GE(argv->size(), 7u);
  EXPECT_EQ((*argv)[0], "mpirun");
  EXPECT_EQ((*argv)[1], "-np");
  EXPECT_EQ((*argv)[2], "4");
  EXPECT_NE(argv->at(argv->size() - 3).find("launcher_test"), std::string::npos);
  EXPECT_EQ(argv->at(argv->size() - 2), "--steps=3");
  EXPECT_EQ(argv->back(), "a b");
}

}  // namespace
}  // namespace zosched
