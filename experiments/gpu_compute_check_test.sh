#!/usr/bin/env bash
# gpu_compute_check end to end: every measured GPU step is predicted with
# its implementation's profile, the kernel-level predictions meet their
# median target (|error| <= 15 %) where the roofline floor does not, every
# row past 30 % names why (none past 50 %), and the tables are written.
set -uo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
out=$(experiments/gpu_compute_check --out_dir="$TEST_TMPDIR/out" 2>&1) || fail "exited $?: $out"
echo "$out" | tail -3
summary=$(grep '^summary:' <<<"$out") || fail "no summary: $out"
rows=$(grep -c 'measured' <<<"$out")
[ "$rows" -ge 20 ] || fail "$rows rows (want every measured step, at least 20)"
read -r median max floor_median < <(sed -E 's/.*kernel-level median \|error\| ([0-9.]+)%, max ([0-9.]+)%.*floor median ([0-9.]+)%.*/\1 \2 \3/' <<<"$summary")
# The median meets its target; a row past 30 % says why.
awk -v m="$median" 'BEGIN { exit !(m <= 15) }' || fail "kernel-level median off target: $summary"
grep -q 'unexplained: 0;' <<<"$summary" || fail "a row misses 30 % without a reason: $summary"
awk -v x="$max" 'BEGIN { exit !(x <= 50) }' || fail "a row misses by more than half: $summary"
awk -v m="$floor_median" 'BEGIN { exit !(m > 15) }' ||
  fail "the roofline floor meets the target too, so the check tells nothing: $summary"
for f in gpu_compute_check.md gpu_compute_check.csv; do
  [ -s "$TEST_TMPDIR/out/$f" ] || fail "$f not written"
done
[ "$(wc -l <"$TEST_TMPDIR/out/gpu_compute_check.csv")" -eq $((rows + 1)) ] || fail "csv rows"
echo PASS
