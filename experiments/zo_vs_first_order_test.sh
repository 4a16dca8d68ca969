#!/usr/bin/env bash
# zo_vs_first_order end to end: every configuration in the CSV, the best per
# strategy in markdown, a chart per machine; and what the catalog figures
# say: on 8 GPUs of 80 GB, OPT-175B fits no first-order strategy while ZO2
# and DistZO2 fit, DistZO2 is faster than ZO2 there, and OPT-1.3B fits
# every strategy.
set -uo pipefail
out="$TEST_TMPDIR/zvf"
fail() { echo "FAIL: $*" >&2; exit 1; }
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
zo2=$(row opt-175b dgx_a100 ZO2 | cut -d'|' -f6)
dist=$(row opt-175b dgx_a100 DistZO2 | cut -d'|' -f6)
awk -v a="$dist" -v b="$zo2" 'BEGIN { exit !(a < b) }' || fail "DistZO2 $dist ms, ZO2 $zo2 ms"
grep -q "time to accuracy" "$out/best.md" || fail "the caveat"
echo PASS
