#!/usr/bin/env bash
# simulate under a kernel ComputeProfile (lower --compute_profile): it
# prints the profile and, beside the prediction, the floor (every compute op
# at its roofline), which is lower; under the default profile the two agree.
set -uo pipefail
lower=schedule/lower
tmp="$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }

# A kernel profile: simulate prints it and, beside the prediction, the
# floor (every compute op at its roofline), lower than the prediction.
$lower --model=opt-1.3b --cluster=h100_sxm_x1 --strategy=zo2 --batch=1 --seq=2048 \
  --compute_dtype=fp16 --host_dtype=fp16 --compute_profile=zosched_cuda --out="$tmp/k.pb" ||
  fail "lower --compute_profile exited $?"
out=$(sim/simulate --schedule="$tmp/k.pb") || fail "simulate exited $?: $out"
floor=$(sed -nE 's/^compute profile: ZOSCHED_CUDA; floor \(every compute op at its roofline\): ([0-9.]+) ms$/\1/p' <<<"$out")
step=$(sed -nE 's/^step time: ([0-9.]+) ms.*/\1/p' <<<"$out")
[ -n "$floor" ] && [ -n "$step" ] || fail "simulate: no profile and floor line: $out"
awk -v f="$floor" -v s="$step" 'BEGIN { exit !(f < s) }' || fail "floor $floor ms not below $step ms"

$lower --model=opt-1.3b --cluster=h100_sxm_x1 --strategy=zo2 --batch=1 --seq=2048 \
  --compute_dtype=fp16 --host_dtype=fp16 --out="$tmp/r.pb" || fail "lower exited $?"
out=$(sim/simulate --schedule="$tmp/r.pb") || fail "simulate exited $?: $out"
floor=$(sed -nE 's/^compute profile: ROOFLINE; floor \(every compute op at its roofline\): ([0-9.]+) ms$/\1/p' <<<"$out")
step=$(sed -nE 's/^step time: ([0-9.]+) ms.*/\1/p' <<<"$out")
[ "$floor" = "$step" ] || fail "the roofline profile: floor '$floor' and step '$step' differ: $out"
echo PASS
