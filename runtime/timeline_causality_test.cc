#include "runtime/timeline_causality.h"

#include "gtest/gtest.h"

namespace zosched {
namespace {

Schedule TwoMemberAllGather() {
  Schedule s;
  for (int device = 0; device < 2; ++device) {
    Op* op = s.add_ops();
    op->set_id(1 + device);
    op->set_device(device);
    op->mutable_collective()->set_key("all-gather losses");
  }
  Op* compute = s.add_ops();
  compute->set_id(3);
  compute->mutable_compute();
  return s;
}

void Add(Timeline* t, int64_t op, int device, int step, int64_t start, int64_t end) {
  OpInterval* i = t->add_ops();
  i->set_op_id(op);
  i->set_device(device);
  i->set_step(step);
  i->set_start_ns(start);
  i->set_end_ns(end);
}

TEST(LargestCausalitySlip, NoneWhereEveryMemberStartsBeforeAnyEnds) {
  Timeline t;
  Add(&t, 1, 0, 0, 0, 100);
  Add(&t, 2, 1, 0, 100, 120);  // starts as the first ends: still in order
  Add(&t, 3, 0, 0, 500, 600);  // not a collective
  EXPECT_EQ(LargestCausalitySlip(TwoMemberAllGather(), t).ns, 0);
}

TEST(LargestCausalitySlip, NamesTheStepAndMembersOfTheLargestGap) {
  Timeline t;
  Add(&t, 1, 0, 0, 0, 100);
  Add(&t, 2, 1, 0, 130, 200);  // 30 ns after device 0 ended
  Add(&t, 1, 0, 1, 1000, 1100);
  Add(&t, 2, 1, 1, 1300, 1400);  // 200 ns after
  const CausalitySlip slip = LargestCausalitySlip(TwoMemberAllGather(), t);
  EXPECT_EQ(slip.ns, 200);
  EXPECT_EQ(slip.step, 1);
  EXPECT_EQ(slip.collective, "all-gather losses");
  EXPECT_EQ(slip.ended_device, 0);
  EXPECT_EQ(slip.started_device, 1);
}

TEST(LargestCausalitySlip, IgnoresOpsTheScheduleDoesNotHave) {
  Timeline t;
  Add(&t, 1, 0, 0, 0, 100);
  Add(&t, 9, 1, 0, 5000, 6000);
  EXPECT_EQ(LargestCausalitySlip(TwoMemberAllGather(), t).ns, 0);
}

}  // namespace
}  // namespace zosched
