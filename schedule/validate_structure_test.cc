#include "schedule/validate_structure.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "schedule/timeline_test_fixtures.h"

namespace zosched {
namespace {

// Two devices on one host, DistZO2-like: each uploads its half of block 0
// into its slot, all-gathers the other half, runs a forward into its
// activations and copies them to the host.
Schedule Baseline() {
  return ScheduleWithDevices({{COMPUTE, H2D, D2H, COLLECTIVE}, {COMPUTE, H2D, D2H, COLLECTIVE}},
                             R"pb(
  name: "baseline"
  cluster {
    name: "tiny"
    hosts { name: "node0" memory_bytes: 1000000000000 }
    devices { name: "gpu0" model: "A100-SXM4-80GB" host: "node0" memory_bytes: 80000000000 }
    devices { name: "gpu1" model: "A100-SXM4-80GB" host: "node0" memory_bytes: 80000000000 }
  }
  buffers { name: "host0/params" kind: HOST_PARAMS device: -1 host: "node0" size_bytes: 8192 persistent: true }
  buffers { name: "host0/acts" kind: ACTIVATIONS device: -1 host: "node0" size_bytes: 2048 }
  buffers { name: "d0/slot" kind: BLOCK_SLOT device: 0 size_bytes: 4096 }
  buffers { name: "d0/act" kind: ACTIVATIONS device: 0 size_bytes: 2048 }
  buffers { name: "d1/slot" kind: BLOCK_SLOT device: 1 size_bytes: 4096 }
  buffers { name: "d1/act" kind: ACTIVATIONS device: 1 size_bytes: 2048 }

  ops {
    id: 1 name: "h2d slice 0" device: 0 stream: "h2d"
    copy {
      direction: HOST_TO_DEVICE
      src { buffer: "host0/params" offset_bytes: 0 size_bytes: 2048 }
      dst { buffer: "d0/slot" offset_bytes: 0 size_bytes: 2048 }
      bytes: 2048 link_class: PCIE
    }
    reads { buffer: "host0/params" offset_bytes: 0 size_bytes: 2048 }
    writes { buffer: "d0/slot" offset_bytes: 0 size_bytes: 2048 }
  }
  ops {
    id: 2 name: "all-gather block 0" device: 0 stream: "collective"
    collective {
      kind: ALL_GATHER key: "ag block 0" participants: [ 0, 1 ] bytes: 4096
      send { buffer: "d0/slot" offset_bytes: 0 size_bytes: 2048 }
      recv { buffer: "d0/slot" offset_bytes: 0 size_bytes: 4096 }
      link_class: NVLINK
    }
    reads { buffer: "d0/slot" offset_bytes: 0 size_bytes: 2048 }
    writes { buffer: "d0/slot" offset_bytes: 2048 size_bytes: 2048 }
  }
  ops {
    id: 3 name: "fwd+ block 0" device: 0 stream: "compute"
    compute { kind: BLOCK_FORWARD sign: PLUS params { part: DECODER_BLOCK block: 0 } }
    reads { buffer: "d0/slot" offset_bytes: 0 size_bytes: 4096 }
    writes { buffer: "d0/act" offset_bytes: 0 size_bytes: 1024 }
  }
  ops {
    id: 4 name: "d2h act" device: 0 stream: "d2h"
    copy {
      direction: DEVICE_TO_HOST
      src { buffer: "d0/act" offset_bytes: 0 size_bytes: 1024 }
      dst { buffer: "host0/acts" offset_bytes: 0 size_bytes: 1024 }
      bytes: 1024 link_class: PCIE
    }
    reads { buffer: "d0/act" offset_bytes: 0 size_bytes: 1024 }
    writes { buffer: "host0/acts" offset_bytes: 0 size_bytes: 1024 }
  }

  ops {
    id: 11 name: "h2d slice 1" device: 1 stream: "h2d"
    copy {
      direction: HOST_TO_DEVICE
      src { buffer: "host0/params" offset_bytes: 2048 size_bytes: 2048 }
      dst { buffer: "d1/slot" offset_bytes: 2048 size_bytes: 2048 }
      bytes: 2048 link_class: PCIE
    }
    reads { buffer: "host0/params" offset_bytes: 2048 size_bytes: 2048 }
    writes { buffer: "d1/slot" offset_bytes: 2048 size_bytes: 2048 }
  }
  ops {
    id: 12 name: "all-gather block 0" device: 1 stream: "collective"
    collective {
      kind: ALL_GATHER key: "ag block 0" participants: [ 0, 1 ] bytes: 4096
      send { buffer: "d1/slot" offset_bytes: 2048 size_bytes: 2048 }
      recv { buffer: "d1/slot" offset_bytes: 0 size_bytes: 4096 }
      link_class: NVLINK
    }
    reads { buffer: "d1/slot" offset_bytes: 2048 size_bytes: 2048 }
    writes { buffer: "d1/slot" offset_bytes: 0 size_bytes: 2048 }
  }
  ops {
    id: 13 name: "fwd+ block 0" device: 1 stream: "compute"
    compute { kind: BLOCK_FORWARD sign: PLUS params { part: DECODER_BLOCK block: 0 } }
    reads { buffer: "d1/slot" offset_bytes: 0 size_bytes: 4096 }
    writes { buffer: "d1/act" offset_bytes: 0 size_bytes: 1024 }
  }
  ops {
    id: 14 name: "d2h act" device: 1 stream: "d2h"
    copy {
      direction: DEVICE_TO_HOST
      src { buffer: "d1/act" offset_bytes: 0 size_bytes: 1024 }
      dst { buffer: "host0/acts" offset_bytes: 1024 size_bytes: 1024 }
      bytes: 1024 link_class: PCIE
    }
    reads { buffer: "d1/act" offset_bytes: 0 size_bytes: 1024 }
    writes { buffer: "host0/acts" offset_bytes: 1024 size_bytes: 1024 }
  }

  edges { from: 1 to: 2 }
  edges { from: 2 to: 3 }
  edges { from: 3 to: 4 }
  edges { from: 11 to: 12 }
  edges { from: 12 to: 13 }
  edges { from: 13 to: 14 }
)pb");
}

Op* FindOp(Schedule* schedule, int64_t id) {
  for (Op& op : *schedule->mutable_ops()) {
    if (op.id() == id) return &op;
  }
  ADD_FAILURE() << "no op " << id;
  return nullptr;
}

Buffer* FindBuffer(Schedule* schedule, const std::string& name) {
  for (Buffer& buffer : *schedule->mutable_buffers()) {
    if (buffer.name() == name) return &buffer;
  }
  ADD_FAILURE() << "no buffer " << name;
  return nullptr;
}

// Appends the op written as textproto.
void AddOp(Schedule* schedule, const std::string& text) {
  absl::Status status = ParseTextProto(text, "inline", schedule->add_ops());
  ASSERT_TRUE(status.ok()) << status;
}

void AddEdge(Schedule* schedule, int64_t from, int64_t to) {
  Edge* edge = schedule->add_edges();
  edge->set_from(from);
  edge->set_to(to);
}

// Expects `status` to have `code` and a message containing each of `parts`.
void ExpectError(const absl::Status& status, absl::StatusCode code,
                 const std::vector<std::string>& parts) {
  EXPECT_EQ(status.code(), code) << status;
  for (const std::string& part : parts) {
    EXPECT_NE(status.message().find(part), std::string::npos)
        << "'" << part << "' not in: " << status.message();
  }
}

void ExpectInvalid(const absl::Status& status,
                   const std::vector<std::string>& parts) {
  ExpectError(status, absl::StatusCode::kInvalidArgument, parts);
}

TEST(ValidateSchedule, BaselineIsValid) {
  absl::Status status = ValidateScheduleStructure(Baseline());
  EXPECT_TRUE(status.ok()) << status;
}

// Rule 1: references.

TEST(ValidateSchedule, RejectsOpOnUnknownDevice) {
  Schedule s = Baseline();
  FindOp(&s, 3)->set_device(5);
  ExpectInvalid(ValidateScheduleStructure(s), {"op 3 'fwd+ block 0'", "device 5 does not exist"});
}

TEST(ValidateSchedule, RejectsUnknownClusterDevice) {
  Schedule s = Baseline();
  s.mutable_devices(1)->set_cluster_device("gpu9");
  ExpectInvalid(ValidateScheduleStructure(s), {"device 1", "'gpu9'", "[gpu0, gpu1]"});
}

TEST(ValidateSchedule, RejectsClusterDeviceUsedTwice) {
  Schedule s = Baseline();
  s.mutable_devices(1)->set_cluster_device("gpu0");
  ExpectInvalid(ValidateScheduleStructure(s), {"device 1", "'gpu0' is already device 0"});
}

TEST(ValidateSchedule, RejectsUnknownStream) {
  Schedule s = Baseline();
  FindOp(&s, 3)->set_stream("peer");
  ExpectInvalid(ValidateScheduleStructure(s),
                {"op 3 'fwd+ block 0'", "no stream 'peer'", "[compute, h2d, d2h, collective]"});
}

TEST(ValidateSchedule, RejectsDuplicateOpId) {
  Schedule s = Baseline();
  FindOp(&s, 4)->set_id(3);
  ExpectInvalid(ValidateScheduleStructure(s),
                {"op 3 'fwd+ block 0'", "op 3 'd2h act'", "same id 3"});
}

TEST(ValidateSchedule, RejectsRangeOutsideBuffer) {
  Schedule s = Baseline();
  BufferRange* write = FindOp(&s, 3)->mutable_writes(0);
  write->set_offset_bytes(1536);
  ExpectInvalid(ValidateScheduleStructure(s),
                {"op 3 'fwd+ block 0'", "writes[0]", "offset 1536, size 1024",
                 "buffer 'd0/act' of 2048 bytes"});
}

TEST(ValidateSchedule, RejectsRangeOfUnknownBuffer) {
  Schedule s = Baseline();
  FindOp(&s, 3)->mutable_reads(0)->set_buffer("d0/nope");
  ExpectInvalid(ValidateScheduleStructure(s), {"op 3", "reads[0]", "'d0/nope'", "does not exist"});
}

TEST(ValidateSchedule, RejectsHostBufferOnUnknownHost) {
  Schedule s = Baseline();
  FindBuffer(&s, "host0/acts")->set_host("node7");
  ExpectInvalid(ValidateScheduleStructure(s), {"'host0/acts'", "'node7'", "[node0]"});
}

TEST(ValidateSchedule, RejectsEdgeToMissingOp) {
  Schedule s = Baseline();
  AddEdge(&s, 3, 99);
  ExpectInvalid(ValidateScheduleStructure(s), {"edge 6: 'to' op 99 does not exist"});
}

// Rule 2: edges across devices.

TEST(ValidateSchedule, RejectsCrossDeviceEdgeBetweenComputeOps) {
  Schedule s = Baseline();
  AddEdge(&s, 3, 13);
  ExpectInvalid(ValidateScheduleStructure(s), {"edge 6", "op 3 'fwd+ block 0' (device 0",
                                      "op 13 'fwd+ block 0' (device 1", "crosses devices"});
}

TEST(ValidateSchedule, AllowsCrossDeviceEdgeOfPeerCopy) {
  Schedule s = Baseline();
  AddOp(&s, R"pb(
    id: 5 name: "peer copy act" device: 0 stream: "d2h"
    copy {
      direction: DEVICE_TO_DEVICE peer_device: 1
      src { buffer: "d0/act" offset_bytes: 0 size_bytes: 1024 }
      dst { buffer: "d1/act" offset_bytes: 1024 size_bytes: 1024 }
      bytes: 1024 link_class: NVLINK
    }
    reads { buffer: "d0/act" offset_bytes: 0 size_bytes: 1024 }
    writes { buffer: "d1/act" offset_bytes: 1024 size_bytes: 1024 }
  )pb");
  AddEdge(&s, 5, 14);
  absl::Status status = ValidateScheduleStructure(s);
  EXPECT_TRUE(status.ok()) << status;
}

// Rule 3: collectives.

TEST(ValidateSchedule, RejectsCollectiveParticipantMismatch) {
  Schedule s = Baseline();
  FindOp(&s, 12)->mutable_collective()->set_participants(0, 1);
  FindOp(&s, 12)->mutable_collective()->set_participants(1, 0);
  ExpectInvalid(ValidateScheduleStructure(s),
                {"collective 'ag block 0'", "op 12", "participants [1, 0]", "op 2",
                 "participants [0, 1]"});
}

TEST(ValidateSchedule, RejectsCollectiveBytesMismatch) {
  Schedule s = Baseline();
  FindOp(&s, 12)->mutable_collective()->set_bytes(2048);
  ExpectInvalid(ValidateScheduleStructure(s),
                {"collective 'ag block 0'", "op 12", "bytes 2048", "op 2", "bytes 4096"});
}

TEST(ValidateSchedule, RejectsCollectiveMissingOnOneParticipant) {
  Schedule s = Baseline();
  FindOp(&s, 12)->mutable_compute()->set_kind(BLOCK_FORWARD);  // no longer a collective
  ExpectInvalid(ValidateScheduleStructure(s), {"collective 'ag block 0'", "device 1 has no op",
                                      "op 2 'all-gather block 0'", "deadlock"});
}

TEST(ValidateSchedule, RejectsCollectiveOnDeviceNotAmongParticipants) {
  Schedule s = Baseline();
  FindOp(&s, 12)->mutable_collective()->mutable_participants()->RemoveLast();
  ExpectInvalid(ValidateScheduleStructure(s), {"op 12", "participants [0]", "own device 1"});
}

// Rule 4: cycles.

TEST(ValidateSchedule, RejectsCycleAcrossStreamsOfOneDevice) {
  Schedule s = Baseline();
  AddEdge(&s, 4, 3);
  absl::Status status = ValidateScheduleStructure(s);
  ExpectInvalid(status, {"cycle",
                         "op 3 'fwd+ block 0' (device 0, stream compute) -(edge 2)-> "
                         "op 4 'd2h act' (device 0, stream d2h) -(edge 6)-> "
                         "op 3 'fwd+ block 0' (device 0, stream compute)"});
  EXPECT_EQ(status.message().find("deadlock"), std::string::npos) << status;
}

TEST(ValidateSchedule, RejectsEdgeFromOpToItself) {
  Schedule s = Baseline();
  AddEdge(&s, 13, 13);
  ExpectInvalid(ValidateScheduleStructure(s),
                {"cycle", "op 13 'fwd+ block 0' (device 1, stream compute) -(edge 6)-> "
                          "op 13 'fwd+ block 0' (device 1, stream compute)"});
}

TEST(ValidateSchedule, RejectsCollectivesIssuedInOppositeOrders) {
  Schedule s = Baseline();
  // Device 0 issues "ag block 0" then "ag block 1"; device 1 the reverse.
  FindOp(&s, 12)->mutable_collective()->set_key("ag block 1");
  AddOp(&s, R"pb(
    id: 5 name: "all-gather block 1" device: 0 stream: "collective"
    collective { kind: ALL_GATHER key: "ag block 1" participants: [ 0, 1 ] bytes: 4096 }
  )pb");
  AddOp(&s, R"pb(
    id: 15 name: "all-gather block 1" device: 1 stream: "collective"
    collective { kind: ALL_GATHER key: "ag block 0" participants: [ 0, 1 ] bytes: 4096 }
  )pb");
  ExpectInvalid(ValidateScheduleStructure(s),
                {"op 2 'all-gather block 0' (device 0, stream collective) -> "
                 "op 5 'all-gather block 1' (device 0, stream collective), "
                 "which runs together with "
                 "op 12 'all-gather block 0' (device 1, stream collective) -> "
                 "op 15 'all-gather block 1' (device 1, stream collective), "
                 "which runs together with op 2",
                 "deadlock"});
}

// Rule 5: reads before writes.

TEST(ValidateSchedule, RejectsReadBeforeAnyWrite) {
  Schedule s = Baseline();
  Buffer* zo = s.add_buffers();
  zo->set_name("d0/zo");
  zo->set_kind(ZO_STATE);
  zo->set_device(0);
  zo->set_size_bytes(16);
  BufferRange* read = FindOp(&s, 3)->add_reads();
  read->set_buffer("d0/zo");
  read->set_size_bytes(16);
  ExpectInvalid(ValidateScheduleStructure(s), {"op 3 'fwd+ block 0'", "bytes [0, 16)",
                                      "'d0/zo'", "declare the buffer persistent"});

  zo->set_persistent(true);
  absl::Status status = ValidateScheduleStructure(s);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(ValidateSchedule, ReportsFirstUncoveredRange) {
  Schedule s = Baseline();
  FindOp(&s, 2)->mutable_writes(0)->set_size_bytes(1024);  // [2048, 3072)
  ExpectInvalid(ValidateScheduleStructure(s),
                {"op 3 'fwd+ block 0'", "bytes [3072, 4096)", "'d0/slot'"});
}

TEST(ValidateSchedule, OwnWriteDoesNotSatisfyOwnRead) {
  Schedule s = Baseline();
  BufferRange* read = FindOp(&s, 3)->add_reads();
  read->set_buffer("d0/act");
  read->set_size_bytes(1024);
  ExpectInvalid(ValidateScheduleStructure(s), {"op 3", "bytes [0, 1024)", "'d0/act'"});
}

TEST(ValidateSchedule, WriteOfSameCollectiveDoesNotSatisfyRead) {
  Schedule s = Baseline();
  // Ops 2 and 12 run together: op 12's write is not before op 2's read.
  BufferRange* read = FindOp(&s, 2)->add_reads();
  read->set_buffer("d0/slot");
  read->set_offset_bytes(2048);
  read->set_size_bytes(2048);
  BufferRange* write = FindOp(&s, 12)->add_writes();
  write->set_buffer("d0/slot");
  write->set_offset_bytes(2048);
  write->set_size_bytes(2048);
  ExpectInvalid(ValidateScheduleStructure(s), {"op 2 'all-gather block 0' (device 0",
                                      "bytes [2048, 4096)", "'d0/slot'"});
}

// Rule 6: races.

TEST(ValidateSchedule, RejectsUnorderedOverlappingWrites) {
  Schedule s = Baseline();
  AddOp(&s, R"pb(
    id: 5 name: "zero act" device: 0 stream: "h2d"
    writes { buffer: "d0/act" offset_bytes: 512 size_bytes: 1024 }
  )pb");
  ExpectInvalid(ValidateScheduleStructure(s),
                {"race on bytes [512, 1024) of buffer 'd0/act'",
                 "op 3 'fwd+ block 0' (device 0, stream compute) writes them",
                 "op 5 'zero act' (device 0, stream h2d) writes them"});
}

TEST(ValidateSchedule, AllowsUnorderedDisjointWrites) {
  Schedule s = Baseline();
  AddOp(&s, R"pb(
    id: 5 name: "zero act" device: 0 stream: "h2d"
    writes { buffer: "d0/act" offset_bytes: 1024 size_bytes: 1024 }
  )pb");
  absl::Status status = ValidateScheduleStructure(s);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(ValidateSchedule, RejectsUploadIntoSlotWhileForwardReadsIt) {
  Schedule s = Baseline();
  AddOp(&s, R"pb(
    id: 5 name: "h2d block 1 slice 0" device: 0 stream: "h2d"
    copy {
      direction: HOST_TO_DEVICE
      src { buffer: "host0/params" offset_bytes: 4096 size_bytes: 2048 }
      dst { buffer: "d0/slot" offset_bytes: 0 size_bytes: 2048 }
      bytes: 2048 link_class: PCIE
    }
    reads { buffer: "host0/params" offset_bytes: 4096 size_bytes: 2048 }
    writes { buffer: "d0/slot" offset_bytes: 0 size_bytes: 2048 }
  )pb");
  AddEdge(&s, 2, 5);  // waits for the all-gather, but not for the forward
  ExpectInvalid(ValidateScheduleStructure(s),
                {"race on bytes [0, 2048) of buffer 'd0/slot'",
                 "op 3 'fwd+ block 0' (device 0, stream compute) reads them",
                 "op 5 'h2d block 1 slice 0' (device 0, stream h2d) writes them"});

  AddEdge(&s, 3, 5);
  absl::Status status = ValidateScheduleStructure(s);
  EXPECT_TRUE(status.ok()) << status;
}

// Rule 7: memory plan.

TEST(ValidateSchedule, RejectsDeviceMemoryOverCapacity) {
  Schedule s = Baseline();
  FindBuffer(&s, "d0/slot")->set_size_bytes(100000000000);
  ExpectError(ValidateScheduleStructure(s), absl::StatusCode::kResourceExhausted,
              {"device 0 (gpu0, A100-SXM4-80GB): memory plan needs 100.0 GB, "
               "capacity 80.0 GB, over by 20.0 GB",
               "'d0/slot' 100.0 GB"});
}

TEST(ValidateSchedule, RejectsHostMemoryOverCapacity) {
  Schedule s = Baseline();
  FindBuffer(&s, "host0/params")->set_size_bytes(1500000000000);
  ExpectError(ValidateScheduleStructure(s), absl::StatusCode::kResourceExhausted,
              {"host 'node0': memory plan needs 1500.0 GB, capacity 1000.0 GB, "
               "over by 500.0 GB",
               "'host0/params' 1500.0 GB"});
}

// A ZO2-like step on one device: a ring of 3 slots over `blocks` blocks, each
// uploaded, updated, run forward with +εz and -εz, and offloaded (5 ops per
// block). Op ids are their index.
Schedule Zo2Ring(int blocks) {
  constexpr int64_t kBlockBytes = 1 << 20;
  constexpr int64_t kActBytes = 1 << 16;
  Schedule s;
  Host* host = s.mutable_cluster()->add_hosts();
  host->set_name("node0");
  host->set_memory_bytes(int64_t{1} << 40);
  Device* gpu = s.mutable_cluster()->add_devices();
  gpu->set_name("gpu0");
  gpu->set_model("RTX-4090");
  gpu->set_host("node0");
  gpu->set_memory_bytes(int64_t{24} << 30);
  ScheduleDevice* device = s.add_devices();
  device->set_id(0);
  device->set_cluster_device("gpu0");
  for (const char* stream : {"compute", "h2d", "d2h"}) device->add_streams()->set_name(stream);

  auto add_buffer = [&](const std::string& name, int dev, int64_t size, bool persistent) {
    Buffer* b = s.add_buffers();
    b->set_name(name);
    b->set_device(dev);
    if (dev < 0) b->set_host("node0");
    b->set_size_bytes(size);
    b->set_persistent(persistent);
  };
  add_buffer("host0/params", -1, blocks * kBlockBytes, true);
  for (int k = 0; k < 3; ++k) add_buffer(absl::StrCat("d0/slot", k), 0, kBlockBytes, false);
  add_buffer("d0/act+", 0, kActBytes, false);
  add_buffer("d0/act-", 0, kActBytes, false);
  add_buffer("d0/zo", 0, 16, true);
  add_buffer("d0/losses", 0, 64, false);

  auto add_op = [&](const std::string& name, const std::string& stream) {
    Op* op = s.add_ops();
    op->set_id(s.ops_size() - 1);
    op->set_name(name);
    op->set_device(0);
    op->set_stream(stream);
    return op;
  };
  auto range = [](BufferRange* r, const std::string& buffer, int64_t offset, int64_t size) {
    r->set_buffer(buffer);
    r->set_offset_bytes(offset);
    r->set_size_bytes(size);
  };
  for (const char* sign : {"+", "-"}) {
    Op* embed = add_op(absl::StrCat("embed", sign), "compute");
    range(embed->add_writes(), absl::StrCat("d0/act", sign), 0, kActBytes);
  }
  std::vector<int64_t> offload(blocks);
  for (int i = 0; i < blocks; ++i) {
    const std::string slot = absl::StrCat("d0/slot", i % 3);
    Op* up = add_op(absl::StrCat("up block ", i), "h2d");
    range(up->add_reads(), "host0/params", i * kBlockBytes, kBlockBytes);
    range(up->add_writes(), slot, 0, kBlockBytes);
    if (i >= 3) AddEdge(&s, offload[i - 3], up->id());
    const int64_t up_id = up->id();
    Op* update = add_op(absl::StrCat("update block ", i), "compute");
    range(update->add_reads(), slot, 0, kBlockBytes);
    range(update->add_reads(), "d0/zo", 0, 16);
    range(update->add_writes(), slot, 0, kBlockBytes);
    AddEdge(&s, up_id, update->id());
    for (const char* sign : {"+", "-"}) {
      const std::string act = absl::StrCat("d0/act", sign);
      Op* fwd = add_op(absl::StrCat("fwd", sign, " block ", i), "compute");
      range(fwd->add_reads(), slot, 0, kBlockBytes);
      range(fwd->add_reads(), act, 0, kActBytes);
      range(fwd->add_writes(), act, 0, kActBytes);
    }
    const int64_t last_compute = s.ops_size() - 1;
    Op* off = add_op(absl::StrCat("off block ", i), "d2h");
    range(off->add_reads(), slot, 0, kBlockBytes);
    range(off->add_writes(), "host0/params", i * kBlockBytes, kBlockBytes);
    AddEdge(&s, last_compute, off->id());
    offload[i] = off->id();
  }
  Op* head = add_op("head+loss", "compute");
  range(head->add_reads(), "d0/act+", 0, kActBytes);
  range(head->add_reads(), "d0/act-", 0, kActBytes);
  range(head->add_writes(), "d0/losses", 0, 64);
  return s;
}

TEST(ValidateSchedule, AcceptsLargeRingSchedule) {
  Schedule s = Zo2Ring(1000);
  ASSERT_GE(s.ops_size(), 5000);
  absl::Status status = ValidateScheduleStructure(s);
  EXPECT_TRUE(status.ok()) << status;

  // Without waiting for block 497's offload, block 500's upload overwrites
  // slot 2 while block 497 still uses it.
  for (int e = 0; e < s.edges_size(); ++e) {
    if (s.ops(s.edges(e).to()).name() == "up block 500") {
      s.mutable_edges()->DeleteSubrange(e, 1);
      break;
    }
  }
  ExpectInvalid(ValidateScheduleStructure(s), {"race", "'d0/slot2'", "block 497", "'up block 500'"});
}

}  // namespace
}  // namespace zosched
