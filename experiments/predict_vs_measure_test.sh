#!/usr/bin/env bash
# A reduced predict-vs-measure end to end (2 schedules, real MPI ranks): the
# cycle runs, every measured op matches a predicted op id (the comparison
# fails otherwise), the error is computed for every schedule, and on the
# compute-bound ZO2 schedule — one process, the host link emulated fast, so
# the step is the calibrated compute ops back to back — the prediction is
# within 25 % of the measured step. The experiment's own target is 5 %
# (median) and 10 % (max) over 30 steps; 25 % over 8 steps leaves room for
# a noisy 2-core CI machine (the test runs exclusive, alone) while still
# failing when the model or the runtime is off by a factor. In a sanitized
# build (ZOSCHED_SANITIZED, set by .bazelrc's asan/tsan/ubsan configs) the
# bound is skipped, saying so: instrumented code runs 2-3x slower, unevenly,
# and a UBSan CI run measured -29 % and then +34 %.
set -uo pipefail
out="$TEST_TMPDIR/pvm"
fail() { echo "FAIL: $*" >&2; exit 1; }
csv="$out/predict_vs_measure.csv"
# A busy spell on a shared VM during calibration inflates every calibrated
# op at once (seen: +44 % twice in a CI run, 3-9 % when the machine is
# quiet; each schedule is calibrated just before it runs, which shortens
# but does not close that window); a second cycle tells that from a model
# or runtime that is off.
for attempt in 1 2; do
  experiments/predict_vs_measure --quick --steps=8 --warmup=2 --runtime_dir=runtime \
    --out_dir="$out" >"$TEST_TMPDIR/log" 2>&1 || fail "exited $?: $(cat "$TEST_TMPDIR/log")"
  [ "$(($(wc -l <"$csv") - 1))" -eq 2 ] || fail "want 2 rows: $(cat "$csv")"
  # error_pct (column 7) is a number for every schedule.
  awk -F, 'NR > 1 && $7 !~ /^[-+]?[0-9]+\.[0-9]+$/ { bad = 1 } END { exit bad }' "$csv" \
    || fail "error not computed: $(cat "$csv")"
  # ... and so is the error of the prediction redone with the run's own
  # compute costs (column 16), from the compute ops' CPU times.
  awk -F, 'NR > 1 && $16 !~ /^[-+]?[0-9]+\.[0-9]+$/ { bad = 1 } END { exit bad }' "$csv" \
    || fail "no prediction from the run's compute costs: $(cat "$csv")"
  # ... and of the calibrated prediction scaled by the speed probe's drift
  # (column 19), from the probes train --speed_probe_every timed between steps.
  awk -F, 'NR > 1 && $19 !~ /^[-+]?[0-9]+\.[0-9]+$/ { bad = 1 } END { exit bad }' "$csv" \
    || fail "no prediction with the cores' speed during the run: $(cat "$csv")"
  # Each schedule ran 1 to 3 times (again while a core drifted more than 5 %
  # from calibration: column 21), and its last run's drift is reported
  # (column 22), within the bound unless all 3 runs drifted.
  awk -F, 'NR > 1 && ($21 !~ /^[123]$/ || $22 !~ /^[0-9]+\.[0-9]$/ || ($21 < 3 && $22 > 5)) {
             bad = 1 } END { exit bad }' "$csv" \
    || fail "runs or core drift wrong: $(cat "$csv")"
  if [ -n "${ZOSCHED_SANITIZED:-}" ]; then
    grep -q "^zo2_compute-bound," "$csv" || fail "no zo2_compute-bound row: $(cat "$csv")"
    echo "the 25 % bound skipped: a $ZOSCHED_SANITIZED build ($(grep "^zo2_compute-bound," "$csv" | cut -d, -f7) %)"
    break
  fi
  awk -F, '$1 == "zo2_compute-bound" { found = 1; e = $7 < 0 ? -$7 : $7; if (e > 25) bad = 1 }
           END { exit !found || bad }' "$csv" && break
  echo "attempt $attempt: zo2 compute-bound |error| above 25 %: $(cut -d, -f1-7 "$csv")"
  [ "$attempt" -eq 2 ] && fail "zo2 compute-bound: |error| above 25 % in both cycles (or no row)"
done
grep -q "^summary: 2 schedules, median |error| .*(target: <= 4% and <= 10%)" \
  "$out/predict_vs_measure.md" || fail "no summary with the testbed's target"
grep -q "^summary with each run's own compute costs .*: median |error|" \
  "$out/predict_vs_measure.md" || fail "no summary with the runs' compute costs"
grep -q "^summary with the cores' speed during the run .*: median |error|" \
  "$out/predict_vs_measure.md" || fail "no summary with the cores' speed during the run"
for d in zo2_compute-bound distzo2_P2xD2_sliced_balanced; do
  [ -s "$out/$d/trace.json" ] && [ -s "$out/$d/timelines.png" ] || fail "$d: missing outputs"
  grep -q '"measured: device 3' "$out/$d/trace.json" 2>/dev/null || [ "$d" = zo2_compute-bound ] \
    || fail "$d: trace lacks the measured timeline"
done
for d in zo2_compute-bound distzo2_P2xD2_sliced_balanced; do
  [ -s "$out/$d/local_cpu.calibrated.pbtxt" ] || fail "$d: no calibration taken before it"
done
# A policy that cannot run, or a selection of no schedule, is refused before
# anything runs.
experiments/predict_vs_measure --only=zo2_compute,nope --out_dir="$TEST_TMPDIR/refused" \
  >"$TEST_TMPDIR/log" 2>&1
status=$?
[ "$status" -eq 2 ] && grep -q "no schedule's name holds 'nope' (the names: zo2_compute-bound," \
  "$TEST_TMPDIR/log" || fail "--only=nope: want exit 2, got $status: $(cat "$TEST_TMPDIR/log")"
for flag in --attempts=0 --max_speed_drift=-0.1; do
  experiments/predict_vs_measure "$flag" --out_dir="$TEST_TMPDIR/refused" >"$TEST_TMPDIR/log" 2>&1
  status=$?
  [ "$status" -eq 2 ] && grep -q -- "${flag%%=*}" "$TEST_TMPDIR/log" \
    || fail "$flag: want exit 2 naming the flag, got $status: $(cat "$TEST_TMPDIR/log")"
done
echo PASS
