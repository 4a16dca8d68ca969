#include "experiments/explore_outputs.h"

#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "base/output_dir.h"
#include "gtest/gtest.h"

namespace zosched {
namespace {

TEST(ExploreOutputsTest, NamesWhatARunWritesAndNothingElse) {
  EXPECT_EQ(BestScheduleFile(7, "opt-1.3b hgx_h100 zo2, 3 slots"),
            "best/07_opt-1.3b_hgx_h100_zo2_3_slots.pb");
  EXPECT_EQ(ClusterFile("dgx_a100[host_link_gbps=16]"),
            "clusters/dgx_a100_host_link_gbps_16.pbtxt");
  for (const char* path :
       {"configurations.csv", "best.md", "best/01_x.pb", "best/123_opt_zo2.pb",
        "clusters/dgx_a100.pbtxt", "pareto_gpus.png", "pareto_cost.csv", "pareto_gpus.gp.log",
        "heatmap_host_link_gbps_by_strategy.dat", "heatmap_model_by_cluster.png",
        "heatmap_compute_profile_by_strategy.png"}) {
    EXPECT_TRUE(IsExploreOutput(path)) << path;
  }
  for (const char* path :
       {"notes.md", "best.txt", "best/notes.pb", "best/1_x.pb", "best/01_x.pbtxt",
        "best/sub/01_x.pb", "clusters/.pbtxt", "clusters/mine.json", "pareto_mine.png",
        "heatmap_colour_by_strategy.png", "configurations.csv.bak", "other/best.md"}) {
    EXPECT_FALSE(IsExploreOutput(path)) << path;
  }
}

void Touch(const std::string& path) { ASSERT_TRUE(WriteFile(path, "x").ok()) << path; }

// A second run into a used directory: refused unless --overwrite, which
// removes the earlier run's files (whatever its sweep) and keeps the user's.
TEST(ExploreOutputsTest, OverwriteRemovesOnlyTheExplorersFiles) {
  const std::string dir = ::testing::TempDir() + "/explore_outputs";
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(CheckOutputDirectory(dir, false).ok());  // absent
  ASSERT_TRUE(MakeDirectories(dir).ok());
  EXPECT_TRUE(CheckOutputDirectory(dir, false).ok());  // empty
  ASSERT_TRUE(MakeDirectories(dir + "/best").ok());
  ASSERT_TRUE(MakeDirectories(dir + "/clusters").ok());
  for (const char* file : {"configurations.csv", "best.md", "best/01_a.pb", "best/10_b.pb",
                           "clusters/c.pbtxt", "pareto_cost.png",
                           "heatmap_gpus_by_slicing.gp", "notes.md", "best/mine.txt"}) {
    Touch(dir + "/" + file);
  }
  const absl::Status refused = CheckOutputDirectory(dir, false);
  EXPECT_TRUE(absl::IsInvalidArgument(refused)) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), dir + " is not empty")) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "--overwrite")) << refused;
  EXPECT_TRUE(CheckOutputDirectory(dir, true).ok());

  const absl::StatusOr<int> removed = RemoveExploreOutputs(dir);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 7);
  EXPECT_TRUE(std::filesystem::exists(dir + "/notes.md"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/best/mine.txt"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/best/10_b.pb"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/clusters"));  // emptied, so removed
  EXPECT_FALSE(std::filesystem::exists(dir + "/pareto_cost.png"));

  Touch(dir + "/file");
  EXPECT_TRUE(absl::IsInvalidArgument(CheckOutputDirectory(dir + "/file", true)));
}

}  // namespace
}  // namespace zosched
