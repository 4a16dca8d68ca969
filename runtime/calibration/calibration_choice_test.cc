#include "runtime/calibration/calibration_choice.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace zosched {
namespace {

// Two calibrations named unlike the real ones: the choice goes by what each
// measures, never by its name.
std::vector<KnownCalibration> Known() {
  return {{"host", /*devices_share_host_cores=*/true, {"local_cpu"}, nullptr},
          {"gpu", /*devices_share_host_cores=*/false, {"h100_sxm_x2"}, nullptr}};
}

CalibrationSettings Settings(const std::string& backend) {
  CalibrationSettings s;
  s.backend = backend;
  return s;
}

TEST(ChooseCalibrationTest, FindsTheNamedCalibration) {
  const std::vector<KnownCalibration> known = Known();
  absl::StatusOr<const KnownCalibration*> chosen = ChooseCalibration(Settings("gpu"), known);
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  EXPECT_EQ(*chosen, &known[1]);
}

TEST(ChooseCalibrationTest, RefusesAnUnknownNameListingTheKnown) {
  EXPECT_EQ(ChooseCalibration(Settings("tpu"), Known()).status().message(),
            "--backend='tpu': expected host or gpu");
}

TEST(ChooseCalibrationTest, ThreadsApplyWhereDevicesShareHostCores) {
  CalibrationSettings s = Settings("gpu");
  s.threads = 2;
  EXPECT_EQ(ChooseCalibration(s, Known()).status().message(),
            "--threads applies to --backend=host only");
  s.backend = "host";
  EXPECT_TRUE(ChooseCalibration(s, Known()).ok());
  s = Settings("gpu");
  s.directions = 4;
  EXPECT_EQ(ChooseCalibration(s, Known()).status().message(),
            "--directions applies to --backend=host only (an accelerator measures the shapes of "
            "--schedules, directions, adapters and all)");
  s.backend = "host";
  EXPECT_TRUE(ChooseCalibration(s, Known()).ok());
  s = Settings("gpu");
  s.peft.kind = "lora";
  EXPECT_EQ(ChooseCalibration(s, Known()).status().message(),
            "--peft applies to --backend=host only (an accelerator measures the shapes of "
            "--schedules, directions, adapters and all)");
  s.backend = "host";
  EXPECT_TRUE(ChooseCalibration(s, Known()).ok());
}

TEST(ChooseCalibrationTest, AcceleratorFlagsApplyWhereDevicesShareNoHostCores) {
  CalibrationSettings s = Settings("host");
  s.tf32 = true;
  EXPECT_EQ(ChooseCalibration(s, Known()).status().message(),
            "--compute_dtype and --tf32 apply to --backend=gpu only (the CPU testbed computes in "
            "FP32)");
  s = Settings("host");
  s.schedules = "a.pb";
  EXPECT_EQ(ChooseCalibration(s, Known()).status().message(),
            "--schedules applies to --backend=gpu only (the CPU testbed measures the shapes of "
            "--model, --batch, --seq and --directions)");
  s.backend = "gpu";
  s.compute_dtype = "FP16";
  EXPECT_TRUE(ChooseCalibration(s, Known()).ok());
}

TEST(DefaultClusterTest, TheFirstThatTheCatalogHasElseTheLast) {
  KnownCalibration k;
  k.default_clusters = {"no_such_cluster", "h100_sxm_x2", "local_cpu"};
  EXPECT_EQ(DefaultCluster(k), "h100_sxm_x2");
  k.default_clusters = {"no_such_cluster", "nor_this"};
  EXPECT_EQ(DefaultCluster(k), "nor_this");
}

}  // namespace
}  // namespace zosched
