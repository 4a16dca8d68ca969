#!/usr/bin/env bash
# calibrate's bad flags and inputs: exit 2 with the flag, the value and the
# range, before anything is measured (each run must end at once); a backend
# this build or machine lacks, or a cluster of hardware the backend does not
# measure, is refused likewise. A failure while measuring exits 1. A CPU
# testbed cluster with more devices than cores and links too fast for a
# copy thread to sleep is calibrated to its end.
set -uo pipefail
calibrate="$PWD/runtime/calibrate"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect2() {  # expect2 "message" args...
  local want="$1"; shift
  out=$(timeout 30 "$calibrate" --out="$TEST_TMPDIR/c.pbtxt" "$@" 2>&1); code=$?
  [ "$code" -eq 2 ] || fail "$* exited $code (want 2): $out"
  grep -qF -- "$want" <<<"$out" || fail "$*: no '$want' in: $out"
}
# testbed NAME DEVICES GBPS MEMORY_BYTES [PEER]: writes $TEST_TMPDIR/NAME.pbtxt,
# a CPU testbed cluster like local_cpu (one host, 2 cores, every device
# sharing them) with DEVICES devices of MEMORY_BYTES each, host links of GBPS
# GB/s, and (PEER=1, the default) the peer domain they share.
testbed() {
  local name=$1 devices=$2 gbps=$3 memory=$4 peer=${5:-1}
  {
    echo "name: \"$name\" description: \"a CPU testbed of calibrate_errors_test\""
    echo 'hosts { name: "local" memory_bytes: 25000000000 memory_bandwidth_gbps: 20 cores: 2 }'
    if [ "$peer" = 1 ]; then
      echo 'peer_domains { name: "mpi" link_class: EMULATED gbps_per_device: 4 latency_s: 2e-5 }'
    fi
    for ((d = 0; d < devices; ++d)); do
      echo "devices { name: \"cpu$d\" model: \"cpu-emulated\" host: \"local\""
      echo "  shares_host_cores: true $([ "$peer" = 1 ] && echo 'peer_domain: "mpi"')"
      echo "  peaks { dtype: FP32 peak_tflops: 0.11 efficiency: 1 }"
      echo "  host_link { link_class: EMULATED down_gbps: $gbps up_gbps: $gbps latency_s: 1e-5 }"
      echo "  memory_bytes: $memory memory_bandwidth_gbps: 5 memory_efficiency: 0.8 copy_engines: 2"
      echo "}"
    done
    echo 'collectives { source: "calibrate_errors_test" ring_base_latency_s: 2e-5'
    echo '  tree_base_latency_s: 2e-5 bus_bandwidth_efficiency: 0.9'
    echo '  step_latencies { link_class: EMULATED ring_s: 1e-5 tree_s: 1e-5 }'
    echo '  step_latencies { link_class: PCIE ring_s: 1e-5 tree_s: 1e-5 }'
    echo '}'
  } >"$TEST_TMPDIR/$name.pbtxt"
}
expect2 "--repeats=0: expected 1 to 1000 (timed runs)" --repeats=0
expect2 "--batch=-4: expected 1 to" --batch=-4
expect2 "--seq=0: expected 1 to" --seq=0
expect2 "--directions=0: expected 1 to 1024 (perturbation directions a step)" --directions=0
expect2 "seq_len is 100 (expected 1 to model 'opt-tiny' max_positions 64)" --seq=100
expect2 "unknown cluster 'nope'" --cluster=nope
expect2 "unknown model 'opt-7b'" --model=opt-7b
expect2 "--backend='bogus': expected cpu or cuda" --backend=bogus
expect2 "--compute_dtype and --tf32 apply to --backend=cuda only" --compute_dtype=fp16
expect2 "--schedules applies to --backend=cuda only" --schedules=a.pb
expect2 "--threads=0: expected 1 to 256 (cores per device)" --threads=0
expect2 "--threads applies to --backend=cpu only" --backend=cuda --threads=2
expect2 "--hosts applies to --backend=cpu only" --backend=cuda --hosts=node1,node2
expect2 "cluster 'two_node_cpu' has 2 hosts joined by NICs (node1, node2): --hosts must name" \
  --cluster=two_node_cpu
expect2 "--hosts names machine 'node1' for both host 'node1' and host 'node2'" \
  --cluster=two_node_cpu --hosts=node1,node1
expect2 "--hosts: cluster 'local_cpu' has no NICs between hosts" --hosts=node1,node2
expect2 "no tokenizer in $TEST_TMPDIR/no_task: expected tokenizer.model" --data="$TEST_TMPDIR/no_task"
expect2 "--task=squad: expected sst2 or boolq" --task=squad
# --backend=cuda: a build without CUDA names --config=cuda. A --config=cuda
# build (CI runs the tests under it too) instead refuses a machine without a
# GPU, or with one the bad --repeats; it alone holds the GPU calibration.
out=$(timeout 30 "$calibrate" --out="$TEST_TMPDIR/c.pbtxt" --backend=cuda --repeats=0 2>&1); code=$?
[ "$code" -eq 2 ] || fail "--backend=cuda exited $code (want 2): $out"
if grep -qF "this build has no CUDA backend" <<<"$out"; then
  grep -qF -- "--backend=cuda: this build has no CUDA backend; build with --config=cuda" <<<"$out" ||
    fail "--backend=cuda without CUDA does not name --config=cuda: $out"
else
  grep -qE "no CUDA GPU is visible|--repeats=0: expected 1 to 1000" <<<"$out" ||
    fail "--backend=cuda in a CUDA build: $out"
  # The schedule files and the data are read and validated before a GPU is
  # looked for.
  expect2 "no tokenizer in $TEST_TMPDIR/no_task: expected tokenizer.model" --backend=cuda \
    --data="$TEST_TMPDIR/no_task"
  expect2 "--task=squad: expected sst2 or boolq" --backend=cuda --task=squad
  expect2 "$TEST_TMPDIR/none.pb" --backend=cuda --schedules="$TEST_TMPDIR/none.pb"
  expect2 "--schedules=',x': an empty file name" --backend=cuda --schedules=,x
  echo "not a schedule" >"$TEST_TMPDIR/bad.pb"
  expect2 "$TEST_TMPDIR/bad.pb" --backend=cuda --schedules="$TEST_TMPDIR/bad.pb"
  # The GPUs' calibration refuses the CPU testbed's cluster, as the CPU's
  # refuses a GPU cluster (below).
  expect2 "--cluster=local_cpu: device 'cpu0' (cpu-emulated) and 3 more are the CPU testbed's" \
    --backend=cuda --cluster=local_cpu
fi

# The CPU backend measures this machine's CPU: a GPU cluster's figures are
# not its to write (they were, under the GPU cluster's name).
for gpu in hgx_h100 dgx_a100; do
  expect2 "--cluster=$gpu: device 'gpu0' (" --cluster="$gpu"
  expect2 "and 7 more are not the CPU testbed's (shares_host_cores is not set)" --cluster="$gpu"
  expect2 "with --backend=cuda on its GPU machine" --cluster="$gpu"
  expect2 "calibrate a CPU testbed cluster (local_cpu, or a copy of clusters/local_cpu.pbtxt)" \
    --cluster="$gpu"
done
# A testbed whose plans do not fit its devices' memory, as lower and train
# refuse it: bad input, named with the schedule.
testbed tiny 4 2 100000
expect2 "lowering zo2 on --cluster=$TEST_TMPDIR/tiny.pbtxt (one of the schedules" \
  --cluster="$TEST_TMPDIR/tiny.pbtxt"
expect2 "memory plan needs" --cluster="$TEST_TMPDIR/tiny.pbtxt"
testbed two 2 2 4294967296
expect2 "lowering distzo2 P2xD2 on --cluster=$TEST_TMPDIR/two.pbtxt" \
  --cluster="$TEST_TMPDIR/two.pbtxt"
testbed no_peer 4 2 4294967296 0
expect2 "(cluster 'no_peer') has no peer_domains; the CPU testbed needs the one its devices share" \
  --cluster="$TEST_TMPDIR/no_peer.pbtxt"
# Where the result goes is checked before measuring, not after.
out=$(timeout 30 "$calibrate" --out="$TEST_TMPDIR/no_dir/c.pbtxt" 2>&1); code=$?
[ "$code" -eq 2 ] || fail "--out in a missing directory exited $code (want 2): $out"
grep -qF "the directory $TEST_TMPDIR/no_dir does not exist" <<<"$out" ||
  fail "--out in a missing directory: $out"
out=$(timeout 30 "$calibrate" --out="$TEST_TMPDIR" 2>&1); code=$?
[ "$code" -eq 2 ] || fail "--out=a directory exited $code (want 2): $out"
grep -qF -- "--out=$TEST_TMPDIR is a directory (expected the file to write)" <<<"$out" ||
  fail "--out=a directory: $out"
[ ! -e "$TEST_TMPDIR/c.pbtxt" ] || fail "a failed calibration wrote its output"

# A failure while measuring (here: no mpirun for the collective probes)
# exits 1, and writes nothing.
out=$(timeout 120 env PATH=/nonexistent "$calibrate" --out="$TEST_TMPDIR/c.pbtxt" --repeats=1 2>&1)
code=$?
[ "$code" -eq 1 ] || fail "a calibration without mpirun exited $code (want 1): $out"
grep -qF "mpirun" <<<"$out" || fail "a calibration without mpirun does not say so: $out"
[ ! -e "$TEST_TMPDIR/c.pbtxt" ] || fail "a failed calibration wrote its output"

# 16 devices sharing this machine's cores, host links at 50 GB/s (a copy's
# memcpy takes longer than its throttle: its thread never sleeps, and the
# compute that yields to it on its core would wait forever): calibrated to
# its end, each probe copy throttled long enough to sleep. The deadline only
# catches a hang; a loaded machine takes long but finishes.
testbed fast_many 16 50 4294967296
out=$(timeout 240 "$calibrate" --cluster="$TEST_TMPDIR/fast_many.pbtxt" --repeats=1 \
  --out="$TEST_TMPDIR/fast_many.calibrated.pbtxt" 2>&1); code=$?
[ "$code" -ne 124 ] || fail "calibrating 16 devices with 50 GB/s links hung: $out"
[ "$code" -eq 0 ] || fail "calibrating 16 devices with 50 GB/s links exited $code: $out"
grep -qE "a transfer thread waking on a device's core: .* each throttled to" <<<"$out" ||
  fail "no transfer-interruption measurement: $out"
grep -qF 'name: "fast_many_calibrated"' "$TEST_TMPDIR/fast_many.calibrated.pbtxt" ||
  fail "the calibrated cluster is not fast_many_calibrated"
grep -qF "interrupt_cpu_s" "$TEST_TMPDIR/fast_many.calibrated.pbtxt" ||
  fail "the calibrated cluster has no interrupt_cpu_s"
echo PASS
