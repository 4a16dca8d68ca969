#include "runtime/calibration/gpu_model_match.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schedule/cluster_catalog.h"

namespace zosched {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Device models of the catalog against the names CUDA gives the GPUs.
TEST(ModelNamesGpu, MatchesTheGenerationAsWholeWords) {
  EXPECT_TRUE(ModelNamesGpu("H100-SXM5-80GB", "NVIDIA H100 80GB HBM3"));
  EXPECT_TRUE(ModelNamesGpu("H100-PCIe-80GB", "NVIDIA H100 PCIe"));
  EXPECT_TRUE(ModelNamesGpu("H200-141GB", "NVIDIA H200"));
  EXPECT_TRUE(ModelNamesGpu("GH200-96GB", "NVIDIA GH200 480GB"));
  EXPECT_TRUE(ModelNamesGpu("A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB"));
  EXPECT_TRUE(ModelNamesGpu("RTX-4090-24GB", "NVIDIA GeForce RTX 4090"));
  EXPECT_TRUE(ModelNamesGpu("GB200-Blackwell-186GB", "NVIDIA GB200"));
  EXPECT_TRUE(ModelNamesGpu("h200-141gb", "NVIDIA H200"));  // case aside

  EXPECT_FALSE(ModelNamesGpu("H100-SXM5-80GB", "NVIDIA H200"));
  EXPECT_FALSE(ModelNamesGpu("H200-141GB", "NVIDIA GH200 480GB"));  // a word, not a part
  EXPECT_FALSE(ModelNamesGpu("RTX-4090-24GB", "NVIDIA GeForce RTX 3090"));
  EXPECT_FALSE(ModelNamesGpu("A100-SXM4-80GB", "NVIDIA H100 80GB HBM3"));
  EXPECT_FALSE(ModelNamesGpu("cpu-emulated", "NVIDIA H100 80GB HBM3"));  // no digit
  EXPECT_FALSE(ModelNamesGpu("", "NVIDIA H200"));
}

TEST(CatalogClustersOfGpu, FindsTheMeasuredMachines) {
  EXPECT_THAT(CatalogClustersOfGpu("NVIDIA H200", 1), ElementsAre("h200_x1"));
  EXPECT_THAT(CatalogClustersOfGpu("NVIDIA H100 80GB HBM3", 1), Contains("h100_sxm_x1"));
  EXPECT_THAT(CatalogClustersOfGpu("NVIDIA H100 80GB HBM3", 2), Contains("h100_sxm_x2"));
  EXPECT_TRUE(CatalogClustersOfGpu("NVIDIA H200", 2).empty());
}

TEST(CheckClusterDescribesGpu, AcceptsTheClusterOfThisGpu) {
  absl::StatusOr<Cluster> h100 = LoadCluster("h100_sxm_x1");
  ASSERT_TRUE(h100.ok()) << h100.status();
  EXPECT_TRUE(CheckClusterDescribesGpu(*h100, "NVIDIA H100 80GB HBM3").ok());
  absl::StatusOr<Cluster> h200 = LoadCluster("h200_x1");
  ASSERT_TRUE(h200.ok()) << h200.status();
  EXPECT_TRUE(CheckClusterDescribesGpu(*h200, "NVIDIA H200").ok());
}

TEST(CheckClusterDescribesGpu, RefusesAnotherModelNamingTheClusterToPass) {
  absl::StatusOr<Cluster> h100 = LoadCluster("h100_sxm_x1");
  ASSERT_TRUE(h100.ok()) << h100.status();
  const absl::Status s = CheckClusterDescribesGpu(*h100, "NVIDIA H200");
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()),
              AllOf(HasSubstr("cluster h100_sxm_x1"), HasSubstr("H100-SXM5-80GB"),
                    HasSubstr("NVIDIA H200"), HasSubstr("pass --cluster=h200_x1")));
}

TEST(CheckClusterDescribesGpu, SaysWhenTheCatalogHasNoClusterOfThisGpu) {
  absl::StatusOr<Cluster> h100x2 = LoadCluster("h100_sxm_x2");
  ASSERT_TRUE(h100x2.ok()) << h100x2.status();
  const absl::Status s = CheckClusterDescribesGpu(*h100x2, "NVIDIA H200");
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()),
              AllOf(HasSubstr("no cluster of 2 x NVIDIA H200"), HasSubstr("--cluster=FILE")));
}

}  // namespace
}  // namespace zosched
