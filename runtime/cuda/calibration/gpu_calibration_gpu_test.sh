#!/usr/bin/env bash
# calibrate --backend=cuda end to end on this machine's GPU (opt-tiny, the
# default cluster, one timed repeat): exits 0 and writes a calibrated Cluster
# (calibrate validates it before writing) with a measured row for every
# compute op class the schedules use, measured GEMM rows in the kernel
# model, the host link's measured figures
# (down, up, duplex, latency), all-gather rows for 2 and 4 ranks, and a
# description naming the GPU. Passes, saying so, when no GPU is visible.
set -uo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
calibrate=runtime/calibrate
out_file="$TEST_TMPDIR/gpu.calibrated.pbtxt"
out=$(timeout 600 "$calibrate" --backend=cuda --repeats=1 --out="$out_file" 2>&1); code=$?
if [ "$code" -eq 2 ] && grep -qF "no CUDA GPU is visible" <<<"$out"; then
  echo "no GPU: skipped"
  exit 0
fi
[ "$code" -ne 124 ] || fail "hung: $out"
[ "$code" -eq 0 ] || fail "exit $code: $out"
[ -s "$out_file" ] || fail "no output file: $out"
for class in UPDATE EMBED BLOCK_FORWARD HEAD_LOSS PROJECTED_GRADIENT; do
  grep -q "op_class: \"$class\"" "$out_file" || fail "no measured_compute row for $class"
done
# The GEMMs the CUDA backend launches, timed into the kernel model.
grep -q "measured_gemms {" "$out_file" || fail "no measured_gemms rows in the kernel model"
grep -q 'source: "calibrate --backend=cuda on ' "$out_file" ||
  fail "the GEMM rows do not say what measured them"
for field in down_gbps up_gbps duplex_gbps latency_s; do
  grep -q "$field:" "$out_file" || fail "the host link lacks $field"
done
for ranks in 2 4; do
  grep -q "ranks: $ranks" "$out_file" || fail "no all-gather rows for $ranks ranks"
done
grep -q 'description: ".*measured by calibrate --backend=cuda on ' "$out_file" ||
  fail "the description does not say what measured it"
# Pinned copies run faster than 1 GB/s on any GPU of the last decade.
awk '/down_gbps:/ { if ($2 < 1) bad = 1; n++ } END { exit !(n > 0 && !bad) }' "$out_file" ||
  fail "implausible host-link rate: $(grep down_gbps "$out_file")"
echo "$out" | grep -E "fit:|wrote"
echo PASS
