#include "runtime/calibration/timing_inputs.h"

#include <vector>

#include "gtest/gtest.h"

namespace zosched {
namespace {

Schedule Make(int batch, int seq_len, uint64_t seed) {
  Schedule s;
  ModelSpec* model = s.mutable_model();
  model->set_name("test-model");
  model->set_family(OPT);
  model->set_vocab_size(1 << 16);
  s.mutable_training()->set_batch_size(batch);
  s.mutable_training()->set_seq_len(seq_len);
  s.mutable_training()->set_base_seed(seed);
  return s;
}

void ExpectSame(const std::vector<StepBatch>& a, const std::vector<StepBatch>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].tokens, b[i].tokens) << "step " << i;
    EXPECT_EQ(a[i].lengths, b[i].lengths) << "step " << i;
    EXPECT_EQ(a[i].labels, b[i].labels) << "step " << i;
  }
}

// Schedules that share a model and sequence length share one read of the
// task, and each gets the batches train would draw for it alone.
TEST(TimingBatchesOfEach, GivesEachScheduleItsOwnBatches) {
  const std::vector<Schedule> schedules = {Make(4, 32, 1), Make(2, 32, 9), Make(4, 64, 1)};
  absl::StatusOr<std::vector<std::vector<StepBatch>>> each =
      TimingBatchesOfEach("synthetic", "sst2", schedules, 3);
  ASSERT_TRUE(each.ok()) << each.status();
  ASSERT_EQ(each->size(), schedules.size());
  for (size_t i = 0; i < schedules.size(); ++i) {
    absl::StatusOr<std::vector<StepBatch>> alone =
        TimingBatches("synthetic", "sst2", schedules[i], 3);
    ASSERT_TRUE(alone.ok()) << alone.status();
    ExpectSame((*each)[i], *alone);
  }
  EXPECT_EQ((*each)[0][0].tokens.size(), 4u * 32);
  EXPECT_EQ((*each)[2][0].tokens.size(), 4u * 64);
}

TEST(TimingBatchesOfEach, RefusesAnUnknownTask) {
  const absl::Status status =
      TimingBatchesOfEach("synthetic", "no-such-task", {Make(4, 32, 1)}, 1).status();
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("no-such-task"), absl::string_view::npos) << status;
}

}  // namespace
}  // namespace zosched
