// libFuzzer target: any bytes as a Cluster textproto (a user's cluster
// file), parsed and validated as LoadCluster does (base/textproto.h,
// schedule/cluster_validate.h). A cluster that passes holds only defined
// enum values.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/check.h"
#include "base/textproto.h"
#include "fuzz/known_enums.h"
#include "schedule/cluster.pb.h"
#include "schedule/cluster_validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  zosched::Cluster cluster;
  if (!zosched::ParseTextProto(text, "fuzz.pbtxt", &cluster).ok()) return 0;
  if (!zosched::ValidateCluster(cluster, "fuzz.pbtxt").ok()) return 0;
  CHECK(zosched::FirstUnknownEnum(cluster).empty()) << zosched::FirstUnknownEnum(cluster);
  return 0;
}
