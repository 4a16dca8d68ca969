#include "runtime/ops/transfer_support.h"

#include "gtest/gtest.h"
#include "schedule/describe_op.h"

namespace zosched {
namespace {

TEST(CheckTransferSupportedTest, HostCopiesAndAllGathersRun) {
  Op copy;
  copy.mutable_copy()->set_direction(HOST_TO_DEVICE);
  EXPECT_TRUE(CheckTransferSupported(copy, "the CPU runtime").ok());
  Op gather;
  gather.mutable_collective()->set_kind(ALL_GATHER);
  EXPECT_TRUE(CheckTransferSupported(gather, "the CPU runtime").ok());
}

TEST(CheckTransferSupportedTest, NamesTheOpAndTheRuntime) {
  Op peer;
  peer.set_name("peer");
  peer.mutable_copy()->set_direction(DEVICE_TO_DEVICE);
  EXPECT_EQ(CheckTransferSupported(peer, "the CUDA backend").message(),
            DescribeOp(peer) +
                " is a peer copy; the CUDA backend moves data between devices only through "
                "collectives");
  Op reduce;
  reduce.mutable_collective()->set_kind(ALL_REDUCE);
  EXPECT_EQ(CheckTransferSupported(reduce, "the CPU runtime").message(),
            DescribeOp(reduce) + " is a ALL_REDUCE; the CPU runtime runs ALL_GATHER collectives only");
}

}  // namespace
}  // namespace zosched
