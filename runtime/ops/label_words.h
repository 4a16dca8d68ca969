// The task's label words against the schedule: the head scores exactly the
// label words the schedule was lowered for, each a token of the model.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// OK when `label_words` (token ids) are as many as the schedule's
// training.num_label_words and each is inside its model's vocabulary.
// Errors: InvalidArgument saying which.
absl::Status CheckLabelWords(const Schedule& schedule, const std::vector<int32_t>& label_words);

}  // namespace zosched
