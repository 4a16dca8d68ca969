// The zoo's models for tests.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "models/model_zoo.h"

namespace zosched {

// The zoo model `name` (LoadModelSpec); a name it cannot load fails the
// current test, and the spec returned is then empty.
inline ModelSpec Zoo(const std::string& name) {
  absl::StatusOr<ModelSpec> spec = LoadModelSpec(name);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *std::move(spec) : ModelSpec();
}

}  // namespace zosched
