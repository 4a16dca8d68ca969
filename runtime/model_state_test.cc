#include "runtime/model_state.h"

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace zosched {
namespace {

// `count` parts of FP32 matrices, each its own z stream, stored in `memory`.
std::vector<StoredPart> Parts(int count, std::vector<std::vector<float>>* memory) {
  std::vector<StoredPart> parts;
  memory->assign(count, std::vector<float>(1000, -1.0f));
  for (int i = 0; i < count; ++i) {
    StoredPart p;
    p.name = "block " + std::to_string(i);
    p.tensors = {{"w" + std::to_string(i), {10, 100}, TensorRole::kMatrix}};
    p.stream = 100 + i;
    p.data = reinterpret_cast<char*>((*memory)[i].data());
    p.dtype = FP32;
    parts.push_back(p);
  }
  return parts;
}

TEST(FillParts, GivesEachPartTheValuesOfFillingItAlone) {
  std::vector<std::vector<float>> memory;
  const std::vector<StoredPart> parts = Parts(9, &memory);
  ASSERT_TRUE(InitialiseParts(parts, 7).ok());
  for (int i = 0; i < 9; ++i) {
    std::vector<float> alone(1000);
    InitPart(parts[i], 7, alone.data());
    EXPECT_EQ(std::memcmp(alone.data(), memory[i].data(), 4000), 0) << parts[i].name;
  }
}

TEST(FillParts, ReturnsTheFirstErrorInPartOrderAndStoresTheRest) {
  std::vector<std::vector<float>> memory;
  const std::vector<StoredPart> parts = Parts(6, &memory);
  std::vector<const StoredPart*> all;
  for (const StoredPart& p : parts) all.push_back(&p);
  std::atomic<int> calls{0};
  const absl::Status s = FillParts(all, [&](const StoredPart& part, float* values) {
    ++calls;
    if (part.name == "block 2" || part.name == "block 4") {
      return absl::NotFoundError(part.name + " is missing");
    }
    for (int i = 0; i < 1000; ++i) values[i] = 3.0f;
    return absl::OkStatus();
  });
  EXPECT_EQ(s.message(), "block 2 is missing");
  EXPECT_EQ(calls.load(), 6);
  EXPECT_EQ(memory[2][0], -1.0f);  // a part whose fill failed is left as it was
  EXPECT_EQ(memory[5][999], 3.0f);
}

}  // namespace
}  // namespace zosched
