#include "experiments/sweep_report.h"

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "base/textproto.h"
#include "gtest/gtest.h"

namespace zosched {
namespace {

// Two models on one cluster, MeZO and ZO2: four configurations.
SweepSpace Space() {
  Sweep sweep;
  const absl::Status parsed = ParseTextProto(R"pb(
    name: "report"
    models: [ "opt-125m", "opt-1.3b" ]
    batch: 8
    seq_len: 256
    clusters { base: "h100_sxm_x2" price_per_gpu_hour: 3 }
    strategies { kind: MEZO }
    strategies { kind: ZO2 }
    constraints { min_tokens_per_s: 1e9 }
    heat_maps { x: "model" y: "strategy" }
  )pb",
                                             "test.pbtxt", &sweep);
  EXPECT_TRUE(parsed.ok()) << parsed;
  absl::StatusOr<SweepSpace> space = ExpandSweep(sweep, "test.pbtxt");
  EXPECT_TRUE(space.ok()) << space.status();
  return *space;
}

// Three fit but miss the constraints (reasons that differ only in their
// figures), one does not fit: nothing is ranked.
std::vector<ConfigResult> NothingRanked() {
  std::vector<ConfigResult> results(4);
  const double tokens[] = {9000, 512, 0, 70.5};
  for (int i : {0, 1, 3}) {
    results[i].state = ConfigState::kFits;
    results[i].tokens_per_s = tokens[i];
    results[i].reason = "misses the constraints: " + std::to_string(static_cast<int>(tokens[i])) +
                        " tokens/s below min_tokens_per_s 1e+09";
  }
  results[2].state = ConfigState::kDoesNotFit;
  results[2].reason = "device 0 (gpu0): memory plan needs 90.1 GB, capacity 85.9 GB";
  return results;
}

TEST(SweepReportTest, CommonReasonsCountAndGiveAnExample) {
  const SweepSpace space = Space();
  const std::vector<std::string> lines = CommonReasons(space, NothingRanked(), 5);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "- 3 fit but miss the constraints, e.g. opt-125m on h100_sxm_x2, mezo: misses the "
            "constraints: 9000 tokens/s below min_tokens_per_s 1e+09");
  EXPECT_EQ(lines[1],
            "- 1 does not fit, e.g. opt-1.3b on h100_sxm_x2, mezo: device 0 (gpu0): memory plan "
            "needs 90.1 GB, capacity 85.9 GB");
  EXPECT_EQ(CommonReasons(space, NothingRanked(), 1).size(), 1u);
}

// best.md says plainly that nothing is ranked, with the counts and why.
TEST(SweepReportTest, BestMarkdownExplainsAnEmptyRanking) {
  const SweepSpace space = Space();
  const std::string md = BestMarkdown(space, NothingRanked(), {}, {}, {});
  EXPECT_TRUE(absl::StrContains(md, "4 configurations: 3 fit (0 of them meet the constraints), "
                                    "1 do not fit, 0 invalid, 0 pruned, 0 failed."))
      << md;
  EXPECT_TRUE(absl::StrContains(md, "**No configuration fits and meets the constraints.**")) << md;
  EXPECT_TRUE(absl::StrContains(md, "- 3 fit but miss the constraints, e.g. opt-125m")) << md;
  EXPECT_FALSE(absl::StrContains(md, "| rank |")) << md;
}

// Every configuration that fits: its profile, its step and the step's
// roofline floor, in the CSV and the best table.
TEST(SweepReportTest, ProfileStepAndFloorAreReported) {
  const SweepSpace space = Space();
  std::vector<ConfigResult> results(4);
  for (int i = 0; i < 4; ++i) {
    results[i].state = ConfigState::kFits;
    results[i].meets_constraints = true;
    results[i].step_ms = 20 + i;
    results[i].roofline_step_ms = 10 + i;
    results[i].floor_ms = 5;
    results[i].tokens_per_s = 1000 - i;
    results[i].score = 1000 - i;
  }
  const std::string csv = ConfigurationsCsv(space, results);
  EXPECT_TRUE(absl::StrContains(csv, ",gpus,compute_profile,state,meets_constraints,step_ms,"
                                     "roofline_step_ms,tokens_per_s,"))
      << csv;
  EXPECT_TRUE(absl::StrContains(csv, ",1,zosched_cuda,fits,yes,20.000000,10.000000,1000.000,"))
      << csv;
  const std::string md = BestMarkdown(space, results, {1, 0}, {}, {});
  EXPECT_TRUE(absl::StrContains(md, "Compute: each configuration's kernel-level profile "
                                    "(zosched_cuda for ZO;"))
      << md;
  EXPECT_TRUE(absl::StrContains(md, "| GPUs | profile | step ms | floor ms | tokens/s |")) << md;
  EXPECT_TRUE(absl::StrContains(md, "| 1 | opt-125m | h100_sxm_x2 | zo2, 3 slots | 1 | "
                                    "zosched_cuda | 21.00 | 11.00 | 999 |"))
      << md;
  EXPECT_TRUE(absl::StrContains(md, "| 2 | opt-125m | h100_sxm_x2 | mezo | 1 | zosched_cuda | "
                                    "20.00 | 10.00 | 1000 |"))
      << md;
}

// With nothing to draw, no chart is drawn (gnuplot would fail on an empty
// range) and none of its files is written; the caller learns which.
TEST(SweepReportTest, PicturesWithNothingToDrawAreSkipped) {
  const SweepSpace space = Space();
  const std::string dir = ::testing::TempDir() + "/nothing_to_draw";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const absl::StatusOr<Pictures> pictures = WritePictures(space, NothingRanked(), dir);
  ASSERT_TRUE(pictures.ok()) << pictures.status();
  EXPECT_TRUE(pictures->drawn.empty());
  EXPECT_EQ(pictures->skipped, (std::vector<std::string>{"pareto_gpus.png", "pareto_cost.png",
                                                         "heatmap_model_by_strategy.png"}));
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

}  // namespace
}  // namespace zosched
