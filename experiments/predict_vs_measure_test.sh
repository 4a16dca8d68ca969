#!/usr/bin/env bash
# A reduced predict-vs-measure end to end (2 schedules, a few steps, real MPI
# ranks): the cycle runs, every measured op matches a predicted op id (the
# comparison fails otherwise), and the error is computed — not that it is
# small (that belongs to the experiment).
set -uo pipefail
out="$TEST_TMPDIR/pvm"
fail() { echo "FAIL: $*" >&2; exit 1; }
experiments/predict_vs_measure --quick --steps=4 --warmup=1 --runtime_dir=runtime \
  --out_dir="$out" >"$TEST_TMPDIR/log" 2>&1 || fail "exited $?: $(cat "$TEST_TMPDIR/log")"
csv="$out/predict_vs_measure.csv"
[ "$(($(wc -l <"$csv") - 1))" -eq 2 ] || fail "want 2 rows: $(cat "$csv")"
# error_pct (column 7) is a number for every schedule.
awk -F, 'NR > 1 && $7 !~ /^[-+]?[0-9]+\.[0-9]+$/ { bad = 1 } END { exit bad }' "$csv" \
  || fail "error not computed: $(cat "$csv")"
grep -q "^summary: 2 schedules, median |error|" "$out/predict_vs_measure.md" || fail "no summary"
for d in zo2_balanced distzo2_P2xD2_sliced_balanced; do
  [ -s "$out/$d/trace.json" ] && [ -s "$out/$d/timelines.png" ] || fail "$d: missing outputs"
  grep -q '"measured: device 3' "$out/$d/trace.json" 2>/dev/null || [ "$d" = zo2_balanced ] \
    || fail "$d: trace lacks the measured timeline"
done
[ -s "$out/local_cpu.calibrated.pbtxt" ] || fail "no calibrated cluster"
echo PASS
