// Lowering and validation, pinned: a fingerprint of the deterministic
// serialization of the Schedule that LowerSchedule returns (or of its error)
// for every strategy on several catalog clusters and zoo models, and a
// fingerprint of the messages ValidateSchedule gives for schedules with one
// numeric field of one op changed. A faster lowering or validation must give
// these byte for byte; a change to what is lowered or checked must update
// them on purpose, saying why.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/message.h"
#include "gtest/gtest.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/lowering.h"
#include "schedule/strategy_grid.h"
#include "schedule/validate.h"

namespace zosched {
namespace {

// FNV-1a, 64 bits.
class Fingerprint {
 public:
  void Add(const std::string& s) {
    for (const char c : s) hash_ = (hash_ ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 0xcbf29ce484222325ULL;
};

std::string DeterministicBytes(const google::protobuf::Message& m) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  m.SerializeToCodedStream(&coded);
  return bytes;
}

struct Case {
  const char* model;
  const char* cluster;
  StrategyKind strategy;
  int pertp, dp;
  bool slicing;
  bool recompute;
  int seq;
  uint64_t want;
};

LowerOptions Options(const Case& c) {
  LowerOptions o = GridLowerOptions({c.strategy, c.pertp, c.dp, c.slicing});
  o.recompute = c.recompute;
  o.training.set_seq_len(c.seq);
  if (c.strategy >= SINGLE_DEVICE) {
    o.training.set_batch_size(8 * c.dp);
    o.training.set_micro_batch_size(4);
  }
  return o;
}

absl::StatusOr<Schedule> Lower(const Case& c) {
  absl::StatusOr<ModelSpec> model = LoadModelSpec(c.model);
  absl::StatusOr<Cluster> cluster = LoadCluster(c.cluster);
  EXPECT_TRUE(model.ok()) << model.status();
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  return LowerSchedule(*model, *cluster, Options(c));
}

// The schedule's bytes, or the error's code and message.
uint64_t LoweringFingerprint(const Case& c) {
  absl::StatusOr<Schedule> s = Lower(c);
  Fingerprint f;
  f.Add(s.ok() ? DeterministicBytes(*s) : s.status().ToString());
  return f.value();
}

TEST(LoweringGolden, SchedulesAreByteForByteThoseOfTheReferenceLowering) {
  // Updated when the GPU catalog entries gained their kernel_model figures
  // (a schedule embeds its cluster); with kernel_model cleared the
  // fingerprints were the earlier ones, unchanged. The recompute cases were
  // updated again when a recomputing block's forward got the recompute
  // workspace (where it computes its intermediates; its size tells the
  // kernel plans whether the attention is fused): every other case is
  // unchanged.
  const Case cases[] = {
      {"opt-125m", "dgx_a100", MEZO, 1, 1, true, false, 512, 0x614a49e7dbcceb47},
      {"opt-1.3b", "hgx_h100", MEZO, 1, 1, true, false, 2048, 0x61553384afbaf549},
      {"opt-66b", "dgx_a100", MEZO, 1, 1, true, false, 2048, 0x5eb2838cffacddfc},
      {"opt-125m", "local_cpu", ZO2, 1, 1, true, false, 128, 0x541dc330a1c33a6b},
      {"opt-13b", "h100_pcie_x4", ZO2, 1, 1, true, false, 2048, 0xb0860e5b383cd438},
      {"llama2-7b", "rtx4090_x8", ZO2, 1, 1, true, false, 1024, 0x9aa518a8e5a6263e},
      {"opt-66b", "dgx_a100", DISTZO2, 1, 8, true, false, 2048, 0x2ee7a00cf4406075},
      {"opt-66b", "dgx_a100", DISTZO2, 2, 4, true, false, 2048, 0xbfd0cdaafffaf09e},
      {"opt-66b", "dgx_a100", DISTZO2, 2, 4, false, false, 2048, 0xcaf5320facd42426},
      {"opt-66b", "dgx_a100", DISTZO2, 1, 2, false, false, 2048, 0x49bab9d59d097626},
      {"opt-13b", "hgx_h100", DISTZO2, 2, 2, true, false, 1024, 0x74c01f62a78c1de2},
      {"opt-13b", "hgx_h100", DISTZO2, 1, 4, false, false, 1024, 0x0d565f793b6f2375},
      {"opt-1.3b", "rtx4090_x8", DISTZO2, 1, 8, true, false, 512, 0x239f6d1c45d4e5b6},
      {"llama2-7b", "h100_pcie_x4", DISTZO2, 2, 2, true, false, 2048, 0x7468010e3cf6bcd4},
      {"gpt2-large", "gb200_nvl72", DISTZO2, 2, 8, true, false, 1024, 0xd0d3547d405699a4},
      {"gpt2-large", "gb200_nvl72", DISTZO2, 1, 16, false, false, 1024, 0x85a831ea3e36fcf1},
      {"opt-125m", "local_cpu", DISTZO2, 2, 2, true, false, 64, 0x7c2d89e08d836272},
      {"opt-125m", "local_cpu", DISTZO2, 1, 4, false, false, 64, 0xa30c01571a32def9},
      {"gpt2-large", "hgx_h100", SINGLE_DEVICE, 1, 1, true, false, 1024, 0x0fba350bf28dda6f},
      {"gpt2-large", "hgx_h100", SINGLE_DEVICE, 1, 1, true, true, 1024, 0xa2a1170083452f94},
      {"opt-1.3b", "dgx_a100", DDP, 1, 8, true, false, 2048, 0x1bec42aa753b4947},
      {"opt-1.3b", "dgx_a100", DDP, 1, 4, true, true, 2048, 0x2aac8223cc3b5beb},
      {"opt-13b", "hgx_h100", ZERO_1, 1, 8, true, false, 2048, 0xa2f64e031c3c3dba},
      {"opt-1.3b", "hgx_h100", ZERO_1, 1, 8, true, true, 2048, 0xf04b0a6513d7b141},
      {"llama2-7b", "dgx_a100", ZERO_2, 1, 8, true, false, 2048, 0x2eead35d4a9dd10b},
      {"llama2-7b", "h100_pcie_x4", ZERO_2, 1, 4, true, true, 1024, 0x7f3111e0e28d36fa},
      {"opt-66b", "dgx_a100", ZERO_3, 1, 8, true, false, 2048, 0x408eacd82faa71b0},
      {"opt-66b", "gb200_nvl72", ZERO_3, 1, 16, true, true, 2048, 0x9223eecab37bed6d},
      {"gpt2-large", "rtx4090_x8", ZERO_3, 1, 8, true, true, 1024, 0x544586665b07c056},
      {"opt-125m", "local_cpu", ZERO_3, 1, 2, true, false, 64, 0x52e9148062c3b43a},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(absl::StrFormat("0x%016x", LoweringFingerprint(c)),
              absl::StrFormat("0x%016x", c.want))
        << c.model << " " << StrategyKind_Name(c.strategy) << " P=" << c.pertp << " D=" << c.dp
        << (c.slicing ? " sliced" : " naive") << (c.recompute ? " recompute" : "") << " on "
        << c.cluster;
  }
}

// Integer fields, each as a message and a field of it.
using IntegerFields =
    std::vector<std::pair<google::protobuf::Message*, const google::protobuf::FieldDescriptor*>>;

// Appends every set singular integer field of `m` and of the messages it
// holds to `out`, in field order.
void CollectIntegerFields(google::protobuf::Message* m, IntegerFields* out) {
  const google::protobuf::Reflection* r = m->GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  r->ListFields(*m, &fields);
  for (const google::protobuf::FieldDescriptor* f : fields) {
    if (f->is_repeated()) continue;
    switch (f->cpp_type()) {
      case google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE:
        CollectIntegerFields(r->MutableMessage(m, f), out);
        break;
      case google::protobuf::FieldDescriptor::CPPTYPE_INT32:
      case google::protobuf::FieldDescriptor::CPPTYPE_INT64:
        out->push_back({m, f});
        break;
      default:
        break;
    }
  }
}

void AddOne(google::protobuf::Message* m, const google::protobuf::FieldDescriptor* f) {
  const google::protobuf::Reflection* r = m->GetReflection();
  if (f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_INT32) {
    r->SetInt32(m, f, r->GetInt32(*m, f) + 1);
  } else {
    r->SetInt64(m, f, r->GetInt64(*m, f) + 1);
  }
}

// The messages ValidateSchedule gives for every copy of the schedule of `c`
// that has one integer field of one op (every `stride`-th) increased by one,
// and for the copy without each of its edges (every `stride`-th).
uint64_t MutantFingerprint(const Case& c, int stride) {
  absl::StatusOr<Schedule> s = Lower(c);
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return 0;
  Fingerprint f;
  for (int i = 0; i < s->ops_size(); i += stride) {
    Schedule copy = *s;
    IntegerFields fields;
    CollectIntegerFields(copy.mutable_ops(i), &fields);
    for (size_t k = 0; k < fields.size(); ++k) {
      Schedule one = *s;
      IntegerFields same;
      CollectIntegerFields(one.mutable_ops(i), &same);
      AddOne(same[k].first, same[k].second);
      f.Add(ValidateSchedule(one).ToString());
    }
  }
  for (int i = 0; i < s->edges_size(); i += stride) {
    Schedule one = *s;
    one.mutable_edges()->DeleteSubrange(i, 1);
    f.Add(ValidateSchedule(one).ToString());
  }
  return f.value();
}

// The ZERO_3 case lowers with recompute: updated when its block forwards
// got the recompute workspace (more fields to change, the same rules).
TEST(ValidationGolden, MessagesForChangedSchedulesAreThoseOfTheReferenceValidation) {
  const struct {
    Case c;  // its `want` unused
    int stride;
    uint64_t want;
  } cases[] = {
      {{"opt-125m", "dgx_a100", MEZO, 1, 1, true, false, 128, 0}, 7, 0x02a41688e73b54c5},
      {{"opt-125m", "local_cpu", ZO2, 1, 1, true, false, 64, 0}, 11, 0x0a4245fd6a37eba8},
      {{"opt-125m", "dgx_a100", DISTZO2, 2, 2, true, false, 64, 0}, 23, 0x0ef182ce8d3c11e4},
      {{"opt-125m", "dgx_a100", DISTZO2, 1, 2, false, false, 64, 0}, 23, 0xa552c6e3c96d8540},
      {{"opt-125m", "hgx_h100", DDP, 1, 2, true, false, 64, 0}, 17, 0x6ca395d8d0973286},
      {{"opt-125m", "hgx_h100", ZERO_3, 1, 2, true, true, 64, 0}, 29, 0x4873a2eccbba0147},
  };
  for (const auto& m : cases) {
    const Case& c = m.c;
    EXPECT_EQ(absl::StrFormat("0x%016x", MutantFingerprint(c, m.stride)),
              absl::StrFormat("0x%016x", m.want))
        << c.model << " " << StrategyKind_Name(c.strategy) << " P=" << c.pertp << " D=" << c.dp
        << " on " << c.cluster;
  }
}

}  // namespace
}  // namespace zosched
