#include "schedule/cluster_validate.h"

#include <functional>
#include <string>
#include <vector>

#include "base/textproto.h"
#include "gtest/gtest.h"
#include "schedule/tiny_cluster_testdata.h"

namespace zosched {
namespace {

// Each case breaks kTinyCluster in one way, by a replacement of its text or
// by an edit of the parsed proto, and checks the message names the element
// and the field.

Cluster Tiny() {
  Cluster cluster;
  absl::Status s = ParseTextProto(kTinyCluster, "inline", &cluster);
  EXPECT_TRUE(s.ok()) << s;
  return cluster;
}

// ValidateCluster's message for `cluster`, which must be invalid.
std::string ErrorOf(const Cluster& cluster) {
  absl::Status s = ValidateCluster(cluster, "tiny.pbtxt");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  return std::string(s.message());
}

// ErrorOf the cluster parsed from `text`.
std::string ErrorOfText(const std::string& text) {
  Cluster cluster;
  absl::Status s = ParseTextProto(text, "inline", &cluster);
  EXPECT_TRUE(s.ok()) << s;
  return ErrorOf(cluster);
}

TEST(ValidateCluster, AcceptsTheTinyCluster) {
  absl::Status s = ValidateCluster(Tiny(), "inline");
  EXPECT_TRUE(s.ok()) << s;
}

TEST(ValidateCluster, RejectsAnEmptyName) {
  Cluster cluster = Tiny();
  cluster.clear_name();
  EXPECT_EQ(ErrorOf(cluster),
            "tiny.pbtxt: cluster '': name is empty (expected e.g. name: \"dgx_a100\")");
}

TEST(ValidateCluster, RejectsAClusterWithoutDevices) {
  EXPECT_EQ(ErrorOfText(R"pb(
              name: "empty"
              hosts { name: "h0" memory_bytes: 1 memory_bandwidth_gbps: 1 }
              collectives { source: "test" bus_bandwidth_efficiency: 1 }
            )pb"),
            "tiny.pbtxt: cluster 'empty': has no devices (expected at least one "
            "devices { ... })");
}

TEST(ValidateCluster, RejectsDuplicateAndEmptyNames) {
  Cluster cluster = Tiny();
  cluster.mutable_devices(1)->set_name("gpu0");
  EXPECT_EQ(ErrorOf(cluster),
            "tiny.pbtxt: cluster 'tiny': device 'gpu0': defined twice "
            "(devices[0] and devices[1]); names must be unique");

  cluster = Tiny();
  cluster.mutable_hosts()->Add()->CopyFrom(cluster.hosts(0));
  EXPECT_EQ(ErrorOf(cluster),
            "tiny.pbtxt: cluster 'tiny': host 'h0': defined twice (hosts[0] and "
            "hosts[1]); names must be unique");

  cluster = Tiny();
  cluster.mutable_devices(1)->clear_name();
  EXPECT_EQ(ErrorOf(cluster),
            "tiny.pbtxt: cluster 'tiny': devices[1]: name is empty (expected a "
            "name unique among the cluster's devices)");

  cluster = Tiny();
  cluster.mutable_nics(0)->set_name("sw1");
  cluster.mutable_devices(0)->set_nic("sw1");
  EXPECT_EQ(ErrorOf(cluster),
            "tiny.pbtxt: cluster 'tiny': nic 'sw1': has the name of a "
            "pcie_switch; pcie_switch, peer_domain and nic names must differ "
            "(MeasuredTransfer.link names any of them)");
}

TEST(ValidateCluster, RejectsUndefinedReferences) {
  struct Case {
    std::function<void(Cluster*)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](Cluster* c) { c->mutable_devices(1)->set_host("h1"); },
       "device 'gpu1': host 'h1' is not defined (defined: h0)"},
      {[](Cluster* c) { c->mutable_devices(1)->clear_host(); },
       "device 'gpu1': host is empty (expected one of the cluster's hosts) "
       "(defined: h0)"},
      {[](Cluster* c) { c->mutable_devices(1)->set_pcie_switch("sw9"); },
       "device 'gpu1': pcie_switch 'sw9' is not defined (defined: sw0, sw1)"},
      {[](Cluster* c) { c->mutable_devices(1)->set_peer_domain("nvl2"); },
       "device 'gpu1': peer_domain 'nvl2' is not defined (defined: nvl)"},
      {[](Cluster* c) { c->mutable_devices(0)->set_nic("nic1"); },
       "device 'gpu0': nic 'nic1' is not defined (defined: nic0)"},
      {[](Cluster* c) {
         c->clear_nics();
         c->mutable_devices(0)->set_nic("nic0");
       },
       "device 'gpu0': nic 'nic0' is not defined (the cluster defines no nics)"},
      {[](Cluster* c) { c->mutable_pcie_switches(1)->set_host("h7"); },
       "pcie_switch 'sw1': host 'h7' is not defined (defined: h0)"},
      {[](Cluster* c) { c->mutable_nics(0)->set_host("h7"); },
       "nic 'nic0': host 'h7' is not defined (defined: h0)"},
  };
  for (const Case& test : cases) {
    Cluster cluster = Tiny();
    test.edit(&cluster);
    EXPECT_EQ(ErrorOf(cluster), "tiny.pbtxt: cluster 'tiny': " + test.message);
  }
}

TEST(ValidateCluster, RejectsASwitchOrNicOfAnotherHost) {
  Cluster cluster = Tiny();
  Host* h1 = cluster.add_hosts();
  *h1 = cluster.hosts(0);
  h1->set_name("h1");
  cluster.mutable_pcie_switches(1)->set_host("h1");
  EXPECT_EQ(ErrorOf(cluster),
            "tiny.pbtxt: cluster 'tiny': device 'gpu1': is on host 'h0' but its "
            "pcie_switch 'sw1' is on host 'h1' (expected a switch of host 'h0')");

  cluster = Tiny();
  *cluster.add_hosts() = cluster.hosts(0);
  cluster.mutable_hosts(1)->set_name("h1");
  cluster.mutable_nics(0)->set_host("h1");
  EXPECT_EQ(ErrorOf(cluster),
            "tiny.pbtxt: cluster 'tiny': device 'gpu0': is on host 'h0' but its "
            "nic 'nic0' is on host 'h1' (expected a NIC of host 'h0')");
}

TEST(ValidateCluster, ListsAtMostTwelveDefinedNames) {
  Cluster cluster = Tiny();
  for (int i = 1; i <= 20; ++i) {
    Nic* nic = cluster.add_nics();
    *nic = cluster.nics(0);
    nic->set_name("nic" + std::to_string(i));
  }
  cluster.mutable_devices(0)->set_nic("nic99");
  EXPECT_EQ(ErrorOf(cluster),
            "tiny.pbtxt: cluster 'tiny': device 'gpu0': nic 'nic99' is not "
            "defined (defined: nic0, nic1, nic2, nic3, nic4, nic5, nic6, nic7, "
            "nic8, nic9, nic10, nic11, ... and 9 more)");
}

// Device `device`'s kernel_model with the figures every one needs (sms,
// tiles), for a case to break one of the others.
KernelModel* TiledKernelModel(Cluster* c, int device) {
  KernelModel* k = c->mutable_devices(device)->mutable_kernel_model();
  k->set_sms(132);
  k->set_gemm_tile_m(128);
  k->set_gemm_tile_n(256);
  return k;
}

TEST(ValidateCluster, RejectsNonPositiveSizesBandwidthsAndPeaks) {
  struct Case {
    std::function<void(Cluster*)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](Cluster* c) { c->mutable_hosts(0)->set_memory_bytes(0); },
       "host 'h0': memory_bytes is 0 (expected > 0)"},
      {[](Cluster* c) { c->mutable_hosts(0)->set_memory_bandwidth_gbps(-1); },
       "host 'h0': memory_bandwidth_gbps is -1 (expected > 0)"},
      {[](Cluster* c) { c->mutable_hosts(0)->set_cores(-2); },
       "host 'h0': cores is -2 (expected >= 0)"},
      {[](Cluster* c) { c->mutable_devices(1)->set_memory_bytes(0); },
       "device 'gpu1': memory_bytes is 0 (expected > 0)"},
      {[](Cluster* c) { c->mutable_devices(1)->set_memory_bandwidth_gbps(0); },
       "device 'gpu1': memory_bandwidth_gbps is 0 (expected > 0)"},
      {[](Cluster* c) { c->mutable_devices(1)->mutable_peaks(0)->set_peak_tflops(0); },
       "device 'gpu1': peaks[0].peak_tflops is 0 (expected > 0)"},
      {[](Cluster* c) { c->mutable_devices(1)->clear_peaks(); },
       "device 'gpu1': has no peaks (expected at least one, e.g. peaks { dtype: "
       "FP32 peak_tflops: 19.5 efficiency: 0.9 })"},
      {[](Cluster* c) { c->mutable_devices(1)->mutable_peaks(0)->clear_dtype(); },
       "device 'gpu1': peaks[0].dtype is not set (expected FP32, FP16 or BF16)"},
      // Proto3 enums are open: a file may hold any number (fuzz/cluster_fuzzer).
      {[](Cluster* c) { c->mutable_devices(1)->mutable_peaks(0)->set_dtype(static_cast<DType>(9)); },
       "device 'gpu1': peaks[0].dtype is 9, not a value of its enum (expected FP32, FP16 or "
       "BF16)"},
      {[](Cluster* c) { *c->mutable_devices(1)->add_peaks() = c->devices(1).peaks(0); },
       "device 'gpu1': peaks[1]: a second peak for dtype BF16 (expected one per "
       "dtype)"},
      {[](Cluster* c) { c->mutable_devices(1)->clear_model(); },
       "device 'gpu1': model is empty (expected e.g. model: \"A100-SXM4-80GB\")"},
      {[](Cluster* c) { c->mutable_devices(1)->set_copy_engines(0); },
       "device 'gpu1': copy_engines is 0 (expected >= 1)"},
      {[](Cluster* c) { c->mutable_devices(1)->set_stream_wake_latency_s(-2e-5); },
       "device 'gpu1': stream_wake_latency_s is -2e-05 (expected >= 0)"},
      {[](Cluster* c) { c->mutable_devices(1)->set_stream_signal_cost_s(-1e-5); },
       "device 'gpu1': stream_signal_cost_s is -1e-05 (expected >= 0)"},
      {[](Cluster* c) { c->mutable_devices(1)->set_same_core_wake_latency_s(-4e-6); },
       "device 'gpu1': same_core_wake_latency_s is -4e-06 (expected >= 0)"},
      {[](Cluster* c) { c->mutable_devices(1)->set_transfer_cpu_s(-3e-5); },
       "device 'gpu1': transfer_cpu_s is -3e-05 (expected >= 0)"},
      {[](Cluster* c) { c->mutable_devices(1)->set_transfer_cpu_gbps(-4); },
       "device 'gpu1': transfer_cpu_gbps is -4 (expected >= 0)"},
      {[](Cluster* c) { c->mutable_devices(1)->set_compute_time_scale(-1.2); },
       "device 'gpu1': compute_time_scale is -1.2 (expected >= 0)"},
      {[](Cluster* c) { c->mutable_devices(0)->set_speed_probe_s(-0.0002); },
       "device 'gpu0': speed_probe_s is -0.0002 (expected >= 0)"},
      {[](Cluster* c) { c->mutable_devices(1)->set_interrupt_cpu_s(-4e-5); },
       "device 'gpu1': interrupt_cpu_s is -4e-05 (expected >= 0)"},
      {[](Cluster* c) { c->mutable_devices(1)->set_compute_spread(1.5); },
       "device 'gpu1': compute_spread is 1.5 (expected a fraction in [0, 1), e.g. 0.03)"},
      {[](Cluster* c) { c->mutable_devices(0)->set_compute_spread(-0.01); },
       "device 'gpu0': compute_spread is -0.01 (expected a fraction in [0, 1), e.g. 0.03)"},
      {[](Cluster* c) {
         KernelModel* k = c->mutable_devices(0)->mutable_kernel_model();
         k->set_sms(132);
         k->set_gemm_tile_m(128);
       },
       "device 'gpu0': kernel_model.gemm_tile_n is 0 (expected > 0)"},
      {[](Cluster* c) {
         KernelModel* k = TiledKernelModel(c, 1);
         k->set_normal_elements_per_s(-1);
       },
       "device 'gpu1': kernel_model.normal_elements_per_s is -1 (expected >= 0)"},
      {[](Cluster* c) {
         KernelModel* k = TiledKernelModel(c, 0);
         MeasuredGemm* g = k->add_measured_gemms();
         g->set_m(2048);
         g->set_n(6144);
         g->set_k(2048);
         g->set_seconds(2.5e-4);
       },
       "device 'gpu0': kernel_model.measured_gemms[0]: dtype is not set (expected FP32, FP16 "
       "or BF16: the dtype the GEMM computes in)"},
      {[](Cluster* c) {
         KernelModel* k = TiledKernelModel(c, 0);
         MeasuredGemm* g = k->add_measured_gemms();
         g->set_dtype(FP16);
         g->set_m(2048);
         g->set_n(6144);
         g->set_k(2048);
         g->set_seconds(0);
       },
       "device 'gpu0': kernel_model.measured_gemms[0]: seconds is 0 (expected > 0)"},
      {[](Cluster* c) {
         KernelModel* k = TiledKernelModel(c, 1);
         for (int batch : {0, 1}) {
           MeasuredGemm* g = k->add_measured_gemms();
           g->set_dtype(BF16);
           g->set_m(1);
           g->set_n(4096);
           g->set_k(4096);
           g->set_batch(batch);
           g->set_seconds(1e-5);
         }
       },
       "device 'gpu1': kernel_model.measured_gemms[1]: has the key of device 'gpu1': "
       "kernel_model.measured_gemms[0] (BF16 1 x 4096 x 4096, batch 1); each key takes one row, "
       "so remove one or merge them"},
      {[](Cluster* c) { c->mutable_peer_domains(0)->set_gbps_per_device(0); },
       "peer_domain 'nvl': gbps_per_device is 0 (expected > 0)"},
      {[](Cluster* c) { c->mutable_peer_domains(0)->clear_link_class(); },
       "peer_domain 'nvl': link_class is not set (expected NVLINK, or EMULATED "
       "on the CPU testbed)"},
      {[](Cluster* c) { c->mutable_peer_domains(0)->set_link_class(static_cast<LinkClass>(42)); },
       "peer_domain 'nvl': link_class is 42, not a value of its enum (expected NVLINK, or "
       "EMULATED on the CPU testbed)"},
      {[](Cluster* c) { c->mutable_nics(0)->set_gbps(0); },
       "nic 'nic0': gbps is 0 (expected > 0)"},
      {[](Cluster* c) { c->mutable_nics(0)->set_latency_s(-1e-6); },
       "nic 'nic0': latency_s is -1e-06 (expected >= 0)"},
  };
  for (const Case& test : cases) {
    Cluster cluster = Tiny();
    test.edit(&cluster);
    EXPECT_EQ(ErrorOf(cluster), "tiny.pbtxt: cluster 'tiny': " + test.message);
  }
}

TEST(ValidateCluster, RejectsBadHostLinksAndUplinks) {
  struct Case {
    std::function<void(Cluster*)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](Cluster* c) { c->mutable_devices(1)->clear_host_link(); },
       "device 'gpu1': host_link is not set (expected e.g. host_link { "
       "link_class: PCIE down_gbps: 25 up_gbps: 25 })"},
      {[](Cluster* c) { c->mutable_devices(1)->mutable_host_link()->clear_link_class(); },
       "device 'gpu1': host_link.link_class is not set (expected PCIE, NVLINK, "
       "C2C, NETWORK, HOST_MEMORY or EMULATED)"},
      {[](Cluster* c) {
         c->mutable_devices(1)->mutable_host_link()->set_link_class(static_cast<LinkClass>(42));
       },
       "device 'gpu1': host_link.link_class is 42, not a value of its enum (expected PCIE, "
       "NVLINK, C2C, NETWORK, HOST_MEMORY or EMULATED)"},
      {[](Cluster* c) { c->mutable_devices(1)->mutable_host_link()->set_down_gbps(0); },
       "device 'gpu1': host_link.down_gbps is 0 (expected > 0)"},
      {[](Cluster* c) { c->mutable_devices(1)->mutable_host_link()->set_up_gbps(-3); },
       "device 'gpu1': host_link.up_gbps is -3 (expected > 0)"},
      {[](Cluster* c) { c->mutable_devices(0)->mutable_host_link()->set_duplex_gbps(-1); },
       "device 'gpu0': host_link.duplex_gbps is -1 (expected >= 0)"},
      {[](Cluster* c) { c->mutable_pcie_switches(0)->clear_uplink(); },
       "pcie_switch 'sw0': uplink is not set (expected e.g. uplink { link_class: "
       "PCIE down_gbps: 25 up_gbps: 25 })"},
      {[](Cluster* c) { c->mutable_pcie_switches(0)->mutable_uplink()->set_up_gbps(0); },
       "pcie_switch 'sw0': uplink.up_gbps is 0 (expected > 0)"},
  };
  for (const Case& test : cases) {
    Cluster cluster = Tiny();
    test.edit(&cluster);
    EXPECT_EQ(ErrorOf(cluster), "tiny.pbtxt: cluster 'tiny': " + test.message);
  }
}

TEST(ValidateCluster, RejectsEfficienciesOutsideZeroToOne) {
  struct Case {
    std::function<void(Cluster*)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](Cluster* c) { c->mutable_devices(0)->mutable_peaks(0)->set_efficiency(0); },
       "device 'gpu0': peaks[0].efficiency is 0 (expected a fraction in (0, 1], "
       "e.g. 0.8)"},
      {[](Cluster* c) { c->mutable_devices(0)->mutable_peaks(0)->set_efficiency(1.2); },
       "device 'gpu0': peaks[0].efficiency is 1.2 (expected a fraction in (0, "
       "1], e.g. 0.8)"},
      {[](Cluster* c) { c->mutable_devices(1)->set_memory_efficiency(0); },
       "device 'gpu1': memory_efficiency is 0 (expected a fraction in (0, 1], "
       "e.g. 0.8)"},
      {[](Cluster* c) { c->mutable_collectives()->set_bus_bandwidth_efficiency(80); },
       "collectives: bus_bandwidth_efficiency is 80 (expected a fraction in (0, "
       "1], e.g. 0.8)"},
  };
  for (const Case& test : cases) {
    Cluster cluster = Tiny();
    test.edit(&cluster);
    EXPECT_EQ(ErrorOf(cluster), "tiny.pbtxt: cluster 'tiny': " + test.message);
  }
}

TEST(ValidateCluster, RejectsAMissingOrIncompleteCollectiveModel) {
  struct Case {
    std::function<void(Cluster*)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](Cluster* c) { c->clear_collectives(); },
       "collectives is not set (expected a CollectiveModel, e.g. the NCCL "
       "figures of ../shared/reference/hardware.md)"},
      {[](Cluster* c) { c->mutable_collectives()->clear_source(); },
       "collectives: source is empty (expected where the figures come from, "
       "e.g. \"NCCL 2.30.7 src/graph/tuning.cc\")"},
      {[](Cluster* c) { c->mutable_collectives()->set_ring_base_latency_s(-1); },
       "collectives: ring_base_latency_s is -1 (expected >= 0)"},
      {[](Cluster* c) { c->mutable_collectives()->clear_step_latencies(); },
       "collectives: no step_latencies entry for NVLINK, which collectives "
       "cross because peer_domain 'nvl' uses it (expected step_latencies { "
       "link_class: NVLINK ring_s: ... tree_s: ... })"},
      {[](Cluster* c) { c->mutable_devices(1)->clear_peer_domain(); },
       "collectives: no step_latencies entry for PCIE, which collectives cross "
       "because devices of host 'h0' share no peer domain (expected "
       "step_latencies { link_class: PCIE ring_s: ... tree_s: ... })"},
      {[](Cluster* c) {
         *c->add_hosts() = c->hosts(0);
         c->mutable_hosts(1)->set_name("h1");
         c->mutable_devices(1)->set_host("h1");
         c->mutable_devices(1)->clear_pcie_switch();
       },
       "collectives: no step_latencies entry for NETWORK, which collectives "
       "cross because the devices span more than one host (expected "
       "step_latencies { link_class: NETWORK ring_s: ... tree_s: ... })"},
      {[](Cluster* c) {
         *c->mutable_collectives()->add_step_latencies() =
             c->collectives().step_latencies(0);
       },
       "collectives: step_latencies[1]: a second entry for NVLINK (expected one "
       "per link class)"},
      {[](Cluster* c) {
         c->mutable_collectives()->mutable_step_latencies(0)->set_tree_s(-4e-6);
       },
       "collectives: step_latencies[0].tree_s is -4e-06 (expected >= 0)"},
      {[](Cluster* c) {
         c->mutable_collectives()->mutable_step_latencies(0)->set_link_class(
             static_cast<LinkClass>(42));
       },
       "collectives: step_latencies[0].link_class is 42, not a value of its enum (expected "
       "e.g. NVLINK)"},
  };
  for (const Case& test : cases) {
    Cluster cluster = Tiny();
    test.edit(&cluster);
    EXPECT_EQ(ErrorOf(cluster), "tiny.pbtxt: cluster 'tiny': " + test.message);
  }
}

TEST(ValidateCluster, ChecksMeasuredTables) {
  Cluster cluster = Tiny();
  ASSERT_TRUE(ParseTextProto(std::string(kTinyCluster) + R"pb(
    measured_transfers { link: "gpu1/host_link" bytes: 1048576 seconds: 4.2e-5 }
    measured_transfers { link: "sw0" bytes: 1048576 seconds: 4.2e-5 }
    measured_transfers { link: "nvl" bytes: 1048576 seconds: 4e-6 }
    measured_compute { op_class: "BLOCK_FORWARD" model: "opt-125m" seconds: 1e-3 }
    measured_collectives { kind: "ALL_GATHER" ranks: 2 bytes: 1024 seconds: 1e-5 }
  )pb", "inline", &cluster).ok());
  absl::Status s = ValidateCluster(cluster, "inline");
  EXPECT_TRUE(s.ok()) << s;

  Cluster bad = cluster;
  bad.mutable_measured_transfers(0)->set_link("gpu7/host_link");
  EXPECT_EQ(ErrorOf(bad),
            "tiny.pbtxt: cluster 'tiny': measured_transfers[0]: link "
            "'gpu7/host_link' is not defined (expected \"DEVICE/host_link\" for "
            "one of the devices, or the name of a pcie_switch, peer_domain or "
            "nic)");
  bad = cluster;
  bad.mutable_measured_transfers(2)->set_seconds(0);
  EXPECT_EQ(ErrorOf(bad),
            "tiny.pbtxt: cluster 'tiny': measured_transfers[2]: seconds is 0 "
            "(expected > 0)");
  bad = cluster;
  bad.mutable_measured_compute(0)->set_op_class("BLOCK_FORWARDD");
  EXPECT_EQ(ErrorOf(bad),
            "tiny.pbtxt: cluster 'tiny': measured_compute[0]: op_class 'BLOCK_FORWARDD' is not "
            "a ComputeKind (expected UPDATE, EMBED, BLOCK_FORWARD, HEAD_LOSS, "
            "PROJECTED_GRADIENT or CAST)");
  bad = cluster;
  bad.mutable_measured_collectives(0)->set_kind("ALLGATHER");
  EXPECT_EQ(ErrorOf(bad),
            "tiny.pbtxt: cluster 'tiny': measured_collectives[0]: kind 'ALLGATHER' is not a "
            "CollectiveKind (expected ALL_GATHER, ALL_REDUCE, REDUCE_SCATTER or BROADCAST)");
  bad = cluster;
  bad.mutable_measured_collectives(0)->set_ranks(1);
  EXPECT_EQ(ErrorOf(bad),
            "tiny.pbtxt: cluster 'tiny': measured_collectives[0]: ranks is 1 "
            "(expected >= 2)");
}

// Two rows for one key: which one the simulator used would be an accident.
TEST(ValidateCluster, RejectsConflictingRowsOfAMeasuredTable) {
  Cluster cluster = Tiny();
  ASSERT_TRUE(ParseTextProto(std::string(kTinyCluster) + R"pb(
    measured_compute { op_class: "UPDATE" model: "m" elements: 10 seconds: 1e-3 }
    measured_compute { op_class: "UPDATE" model: "m" elements: 20 seconds: 2e-3 }
    measured_compute { op_class: "UPDATE" model: "m" elements: 10 dtype: FP16 seconds: 1e-3 }
    measured_compute { op_class: "UPDATE" model: "m" elements: 10 seconds: 3e-3 }
  )pb", "inline", &cluster).ok());
  EXPECT_EQ(ErrorOf(cluster),
            "tiny.pbtxt: cluster 'tiny': measured_compute[3]: has the key of "
            "measured_compute[0] (op_class UPDATE, model 'm', examples 0, seq_len 0, elements "
            "10, dtype DTYPE_UNSPECIFIED); each key takes one row, so remove one or merge them");
  cluster = Tiny();
  ASSERT_TRUE(ParseTextProto(std::string(kTinyCluster) + R"pb(
    measured_transfers { link: "sw0" bytes: 1024 seconds: 1e-6 }
    measured_transfers { link: "sw0" bytes: 1024 seconds: 2e-6 }
  )pb", "inline", &cluster).ok());
  EXPECT_NE(ErrorOf(cluster).find("measured_transfers[1]: has the key of measured_transfers[0] "
                                  "(link 'sw0', bytes 1024)"),
            std::string::npos);
  cluster = Tiny();
  ASSERT_TRUE(ParseTextProto(std::string(kTinyCluster) + R"pb(
    measured_collectives { kind: "ALL_GATHER" ranks: 2 bytes: 64 seconds: 1e-6 }
    measured_collectives { kind: "ALL_GATHER" ranks: 4 bytes: 64 seconds: 2e-6 }
    measured_collectives { kind: "ALL_GATHER" ranks: 2 bytes: 64 seconds: 3e-6 }
  )pb", "inline", &cluster).ok());
  EXPECT_NE(ErrorOf(cluster).find("measured_collectives[2]: has the key of "
                                  "measured_collectives[0] (kind ALL_GATHER, ranks 2, bytes 64)"),
            std::string::npos);
}

}  // namespace
}  // namespace zosched
