// Calibration on the CPU testbed across machines: the NICs between the
// cluster's hosts (rate and latency per direction, as the runtime's MPI
// messages cross them) and the runtime's all-gather among ranks on two
// machines, as the collective model's NETWORK step latency. Runs where the
// cluster's hosts are joined by NICs (two_node_cpu), on the machines
// `calibrate --hosts` names, one per cluster host in its order (the
// two-node testbed's node1, node2; tools/two_node_testbed.sh).
//
// The probes' results come back through a file under /tmp that rank 0
// writes, and rank 0 runs on the first machine of --hosts: run calibrate
// there (on the testbed, every node shares this machine's /tmp).
//
// Units: seconds, bytes, GB/s (1e9 bytes per second).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "runtime/calibration/calibration_settings.h"
#include "schedule/cluster.pb.h"

namespace zosched {

// settings.hosts against `cluster`: one distinct machine per host where the
// cluster has NICs, none where it has not. Errors: InvalidArgument saying
// which and what would be right.
absl::Status CheckNicHosts(const CalibrationSettings& settings, const Cluster& cluster);

// The NIC probe, on 2 ranks under mpirun on two machines (MPI
// initialised): for each size of 4 KiB .. 16 MiB (x4), one message each way
// (rank 0 to 1, then 1 to 0) per round, 1 + settings.repeats rounds, the
// first untimed. A message's one-way time is its sender's time from
// sending it to the receiver's 1-byte reply, less half the median round
// trip of 1-byte messages. Rank 0 writes "bytes seconds_0to1 seconds_1to0"
// (medians) per size to `path`. Errors: FailedPrecondition when both ranks
// run on one machine (naming it); MPI's.
absl::Status NicProbe(const CalibrationSettings& settings, const std::string& path);

// For each host k > 0 of `out` with a NIC, runs NicProbe between
// settings.hosts[0] and settings.hosts[k] (probe_runner.h); per direction,
// the rate is the slope of a line through every size (a fit whose time
// does not grow with the bytes is measured again, three times at most) and
// the latency the smallest message's one-way time (a link's token bucket
// lets short messages through at once, so the line's intercept can be
// below zero). It writes the NICs:
// host 0's gbps and latency_s from the direction 0 -> k, its in_gbps from
// k -> 0 (the pair with host 1), host k's gbps, latency_s from k -> 0 and
// in_gbps from 0 -> k. Then runs the collective probe (collective_calibration.h)
// across hosts 0 and 1, as many ranks on each as the smaller holds devices
// (at least 1), takes its fixed cost (the smallest size's time less its
// bytes at the fitted rate), and sets the collective model's NETWORK step
// latency to (fixed cost - ring base latency) / (ranks - 1),
// the ring's steps all crossing the slowest link class (sim/cost_model.h).
// Prints every size and fit. Errors: FailedPrecondition when the cluster's
// first host has no NIC or settings.hosts does not name a machine for
// every host; RunProbe's; Internal when a probe wrote no results;
// Unavailable when three fits do not grow with the bytes.
absl::Status MeasureNics(const CalibrationSettings& settings, Cluster* out);

}  // namespace zosched
