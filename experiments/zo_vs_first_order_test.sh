#!/usr/bin/env bash
# zo_vs_first_order end to end: every configuration in the CSV, the best per
# strategy in markdown, a chart per machine; and what the catalog figures
# say: on 8 GPUs of 80 GB, OPT-175B fits no first-order strategy while ZO2
# and DistZO2 fit, DistZO2 is faster than ZO2 there, and OPT-1.3B fits
# every strategy; both sides are predicted kernel by kernel (ZO under
# zosched_cuda, AdamW under pytorch_first_order) with the roofline floor
# beside each step, never above it.
set -uo pipefail
out="$TEST_TMPDIR/zvf"
fail() { echo "FAIL: $*" >&2; exit 1; }
source "$PWD/experiments/study_outputs.sh"
experiments/zo_vs_first_order --out_dir="$out" >"$TEST_TMPDIR/stdout" || fail "exited $?"
for m in dgx_a100 hgx_h100 h100_sxm_x1; do
  head -c 4 "$out/$m.png" | od -An -c | grep -q "P   N   G" || fail "no chart for $m"
done
[ "$(grep -c "^opt-" "$out/configurations.csv")" -ge 250 ] || fail "configurations.csv"
row() { grep -F "| $1 | $2 | $3 |" "$out/best.md"; }
for s in DDP ZeRO-1 ZeRO-2 ZeRO-3; do
  row opt-175b hgx_h100 "$s" | grep -q "does not fit: device 0" || fail "OPT-175B $s fits?"
  row opt-1.3b dgx_a100 "$s" | grep -q "GPUs, micro-batch" || fail "OPT-1.3B $s does not fit"
done
row opt-175b h100_sxm_x1 ZO2 | grep -q "does not fit: host 'host0'" || fail "host memory"
zo2=$(row opt-175b dgx_a100 ZO2 | cut -d'|' -f7)
dist=$(row opt-175b dgx_a100 DistZO2 | cut -d'|' -f7)
awk -v a="$dist" -v b="$zo2" 'BEGIN { exit !(a < b) }' || fail "DistZO2 $dist ms, ZO2 $zo2 ms"
grep -q "time to accuracy" "$out/best.md" || fail "the caveat"
grep -qF "| best configuration | profile | step ms | floor ms | tokens/s |" "$out/best.md" ||
  fail "best.md columns"
row opt-1.3b dgx_a100 ZeRO-2 | grep -q "| pytorch_first_order |" || fail "AdamW's profile"
row opt-1.3b dgx_a100 DistZO2 | grep -q "| zosched_cuda |" || fail "DistZO2's profile"
check_floors "$out/configurations.csv"
# Every configuration that fits is predicted under its side's kernel profile,
# recomputing AdamW too: the same realism on both sides.
csv_columns "$out/configurations.csv" strategy knobs fits compute_profile | awk -F'\t' '
  $3 != "yes" { next }
  { want = $1 ~ /^(MeZO|ZO2|DistZO2)$/ ? "zosched_cuda" : "pytorch_first_order" }
  $4 != want { print "row " NR + 1 ": " $1 " " $2 " under " $4; exit 1 }' ||
  fail "a configuration under another profile"
! grep -q "| roofline |" "$out/best.md" ||
  fail "a best configuration at the roofline: $(grep "| roofline |" "$out/best.md")"
echo PASS
