// libFuzzer target: any bytes as a ModelSpec textproto (a user's model
// file), parsed and validated as LoadModelSpec does (base/textproto.h,
// models/model_spec.h). A spec that passes must hold only defined enum
// values, and is then counted by models/accounting.h and
// models/model_tensors.h, which rely on validation's limits to keep their
// int64 arithmetic from overflowing (UBSan checks it).
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/check.h"
#include "base/textproto.h"
#include "fuzz/known_enums.h"
#include "models/accounting.h"
#include "models/model.pb.h"
#include "models/model_spec.h"
#include "models/model_tensors.h"

namespace zosched {
namespace {

void CountEverything(const ModelSpec& spec) {
  const int64_t seq_len = spec.max_positions();
  TotalParams(spec);
  BlockForwardFlopsPerToken(spec, seq_len);
  for (DType dtype : {FP32, FP16, BF16}) {
    BlockBytes(spec, dtype);
    DualForwardActivationBytesPerToken(spec, seq_len, dtype);
    LabelHeadSliceBytes(spec, 2, dtype);
  }
  CountElements(BlockTensors(spec, spec.num_layers() - 1));
}

}  // namespace
}  // namespace zosched

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  zosched::ModelSpec spec;
  if (!zosched::ParseTextProto(text, "fuzz.pbtxt", &spec).ok()) return 0;
  if (!zosched::ValidateModelSpec(spec, "fuzz.pbtxt").ok()) return 0;
  CHECK(zosched::FirstUnknownEnum(spec).empty()) << zosched::FirstUnknownEnum(spec);
  zosched::CountEverything(spec);
  return 0;
}
