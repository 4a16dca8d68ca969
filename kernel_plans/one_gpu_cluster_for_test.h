// The plans' tests lower real schedules onto this: one GPU with a peak for
// every compute dtype and room for the models they use.
#pragma once

#include <google/protobuf/text_format.h>

#include "gtest/gtest.h"
#include "schedule/cluster.pb.h"

namespace zosched {

inline Cluster OneGpuClusterForTest() {
  constexpr char kText[] = R"pb(
    name: "one-gpu"
    hosts { name: "h" memory_bytes: 1000000000000 memory_bandwidth_gbps: 100 cores: 8 }
    devices {
      name: "gpu0" model: "test-gpu" host: "h" memory_bytes: 80000000000
      peaks { dtype: FP32 peak_tflops: 60 efficiency: 0.8 }
      peaks { dtype: FP16 peak_tflops: 900 efficiency: 0.7 }
      peaks { dtype: BF16 peak_tflops: 900 efficiency: 0.7 }
      memory_bandwidth_gbps: 3000 memory_efficiency: 0.85 copy_engines: 2
      host_link { link_class: PCIE down_gbps: 50 up_gbps: 50 latency_s: 5e-6 }
    }
    collectives {
      source: "test"
      step_latencies { link_class: NVLINK ring_s: 3e-6 tree_s: 4e-6 }
      bus_bandwidth_efficiency: 0.8
    }
  )pb";
  Cluster cluster;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(kText, &cluster));
  return cluster;
}

}  // namespace zosched
