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
# The bound holds a prediction for this machine to the machine as it ran,
# so it is judged only on a cycle that had the machine to itself: one in
# which other processes took at most 5 % of the cores' time (/proc/stat,
# less this test's own children). The runtime's compute threads run at
# SCHED_IDLE, so any busy process takes their cores first and stretches
# the step however right the model is; the bound is then skipped, saying
# so (a slower or faster machine that is not shared keeps it: calibration
# measures that machine). Nothing else here depends on the machine's speed.
set -uo pipefail
out="$TEST_TMPDIR/pvm"
fail() { echo "FAIL: $*" >&2; exit 1; }
csv="$out/predict_vs_measure.csv"
# machine_ticks: the CPU time of all cores in ticks, busy (user, nice,
# system, irq, softirq, steal: a VM's host busy elsewhere) and in all.
machine_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
# own_ticks: this shell's CPU time and its ended children's (with all they
# waited for: calibrate, mpirun, the ranks), in ticks.
own_ticks() { sed 's/^.*) //' /proc/$$/stat | awk '{ print $12 + $13 + $14 + $15 }'; }
# A busy spell on a shared VM during calibration inflates every calibrated
# op at once (seen: +44 % twice in a CI run, 3-9 % when the machine is
# quiet; each schedule is calibrated just before it runs, which shortens
# but does not close that window); a second cycle tells that from a model
# or runtime that is off. The bound fails only when two cycles that had the
# machine to themselves both missed it.
missed=0
for attempt in 1 2; do
  read -r busy0 total0 <<<"$(machine_ticks)"
  own0=$(own_ticks)
  experiments/predict_vs_measure --quick --steps=8 --warmup=2 --programs_dir=. \
    --out_dir="$out" >"$TEST_TMPDIR/log" 2>&1 || fail "exited $?: $(cat "$TEST_TMPDIR/log")"
  read -r busy1 total1 <<<"$(machine_ticks)"
  own1=$(own_ticks)
  # The share of the cores' time other processes took during the cycle, %.
  others=$(awk -v b=$((busy1 - busy0)) -v o=$((own1 - own0)) -v t=$((total1 - total0)) \
    'BEGIN { printf "%.1f", (t > 0 && b > o) ? 100 * (b - o) / t : 0 }')
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
  # Each schedule ran 1 to 3 times (column 21: again while a core drifted
  # more than 5 % from calibration, or the calibration's compute times varied
  # more than 10 %), and its kept run's drift (column 22) and calibration
  # spread (column 23) are reported, within the bounds unless all 3 runs
  # missed them.
  awk -F, 'NR > 1 && ($21 !~ /^[123]$/ || $22 !~ /^[0-9]+\.[0-9]$/ || $23 !~ /^[0-9]+\.[0-9]$/ ||
                      ($21 < 3 && ($22 > 5 || $23 > 10))) {
             bad = 1 } END { exit bad }' "$csv" \
    || fail "runs, core drift or calibration spread wrong: $(cat "$csv")"
  if [ -n "${ZOSCHED_SANITIZED:-}" ]; then
    grep -q "^zo2_compute-bound," "$csv" || fail "no zo2_compute-bound row: $(cat "$csv")"
    echo "the 25 % bound skipped: a $ZOSCHED_SANITIZED build ($(grep "^zo2_compute-bound," "$csv" | cut -d, -f7) %)"
    break
  fi
  grep -q "^zo2_compute-bound," "$csv" || fail "no zo2_compute-bound row: $(cat "$csv")"
  error=$(grep "^zo2_compute-bound," "$csv" | cut -d, -f7)
  if awk -v o="$others" 'BEGIN { exit !(o > 5) }'; then
    echo "attempt $attempt: other processes took $others % of the cores' time: the 25 % bound says nothing of this cycle (zo2 compute-bound error $error %)"
    [ "$attempt" -eq 2 ] && echo "the 25 % bound skipped: the machine was shared in $((2 - missed)) of 2 cycles"
    continue
  fi
  if awk -v e="$error" 'BEGIN { exit !((e < 0 ? -e : e) <= 25) }'; then
    echo "attempt $attempt: zo2 compute-bound error $error % (other processes took $others % of the cores' time)"
    break
  fi
  missed=$((missed + 1))
  echo "attempt $attempt: zo2 compute-bound |error| above 25 % (other processes took $others % of the cores' time): $(cut -d, -f1-7 "$csv")"
  [ "$missed" -eq 2 ] && fail "zo2 compute-bound: |error| above 25 % in both cycles"
  [ "$attempt" -eq 2 ] && echo "the 25 % bound skipped: one cycle missed it, the other had a shared machine"
done
grep -q "^summary: 2 schedules, median |error| .*(target: <= 4% and <= 10%)" \
  "$out/predict_vs_measure.md" || fail "no summary with the testbed's target"
grep -q "^breakdown (overlap over all devices, exposed per device; measured: medians over the steps): overlap within 5 points in [0-2] of 2 schedules, exposed communication within 10% or 0.1 ms in [0-2] of 2" \
  "$out/predict_vs_measure.md" || fail "no summary of the breakdown's targets"
grep -q "^summary with each run's own compute costs .*: median |error| .*; breakdown: overlap within target in [0-2] of 2, exposed communication in [0-2] of 2$" \
  "$out/predict_vs_measure.md" || fail "no summary with the runs' compute costs"
grep -q "^summary with the cores' speed during the run .*: median |error| .*; breakdown: overlap within target in [0-2] of 2, exposed communication in [0-2] of 2$" \
  "$out/predict_vs_measure.md" || fail "no summary with the cores' speed during the run"
# The predictions again have their breakdowns (columns 25-28: overlap % and
# exposed ms with the run's compute costs, then with the cores' speed), and
# the run's collective CPU per device (column 29, GB/s; zo2 has none).
awk -F, 'NR > 1 && ($25 !~ /^[0-9]+\.[0-9]$/ || $26 !~ /^[0-9]+\.[0-9][0-9][0-9]$/ ||
                    $27 !~ /^[0-9]+\.[0-9]$/ || $28 !~ /^[0-9]+\.[0-9][0-9][0-9]$/ ||
                    ($1 ~ /^distzo2/ && $29 !~ /^[0-9.]+;[0-9.]+;[0-9.]+;[0-9.]+$/)) { bad = 1 }
           END { exit bad }' "$csv" || fail "the predictions again lack their breakdowns or the run's collective CPU: $(cat "$csv")"
for d in zo2_compute-bound distzo2_P2xD2_sliced_balanced; do
  [ -s "$out/$d/trace.json" ] && [ -s "$out/$d/timelines.png" ] || fail "$d: missing outputs"
  grep -q '"measured: device 3' "$out/$d/trace.json" 2>/dev/null || [ "$d" = zo2_compute-bound ] \
    || fail "$d: trace lacks the measured timeline"
done
# Devices pinned to one core (device d on core d mod the cores: 0 and 2, 1
# and 3 on this 2-core machine) take turns: in the measured step no compute
# op of one overlaps one of the other (times on the node's shared clock),
# and the lower device computes first.
cores=$(nproc)
if [ "$cores" -lt 4 ]; then
  awk -v cores="$cores" -F'[:,]' '/"ph":"X"/ && /"pid":100[0-3],"tid":0,/ {
      for (i = 1; i < NF; ++i) {
        if ($i == "\"pid\"") pid = $(i + 1) - 1000
        if ($i == "\"ts\"") ts = $(i + 1)
        if ($i == "\"dur\"") dur = $(i + 1)
      }
      n[pid]++; start[pid, n[pid]] = ts; end[pid, n[pid]] = ts + dur
      if (!(pid in first) || ts < first[pid]) first[pid] = ts
    }
    END {
      for (a = 0; a < 4; ++a) for (b = a + 1; b < 4; ++b) {
        if (a % cores != b % cores) continue
        if (first[b] < first[a]) {
          printf "device %d computed first on its core, at %.3f us, before device %d at %.3f\n",
            b, first[b], a, first[a]
          bad = 1
        }
        for (i = 1; i <= n[a]; ++i) for (j = 1; j <= n[b]; ++j) {
          if (start[a, i] < end[b, j] && start[b, j] < end[a, i]) {
            printf "devices %d and %d computed at once: %.3f-%.3f and %.3f-%.3f us\n",
              a, b, start[a, i], end[a, i], start[b, j], end[b, j]
            bad = 1
          }
        }
      }
      exit bad
    }' "$out/distzo2_P2xD2_sliced_balanced/trace.json" >"$TEST_TMPDIR/turns" \
    || fail "devices on one core did not take turns: $(head -3 "$TEST_TMPDIR/turns")"
  grep -c '"pid":1002,"tid":0,' "$out/distzo2_P2xD2_sliced_balanced/trace.json" | grep -qv '^0$' \
    || fail "no measured compute ops of device 2 in the trace"
else
  echo "$cores cores: each device of P2xD2 computes on its own, no turns to check"
fi
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
for flag in --attempts=0 --rounds=0 --max_speed_drift=-0.1 --max_calibration_spread=nan; do
  experiments/predict_vs_measure "$flag" --out_dir="$TEST_TMPDIR/refused" >"$TEST_TMPDIR/log" 2>&1
  status=$?
  [ "$status" -eq 2 ] && grep -q -- "${flag%%=*}" "$TEST_TMPDIR/log" \
    || fail "$flag: want exit 2 naming the flag, got $status: $(cat "$TEST_TMPDIR/log")"
done
# Rounds: the set measured twice in turn, each schedule calibrated and run
# anew in each round (the second into <schedule>/round2), one row a
# schedule reporting the medians and how many rounds they are of.
rounds="$TEST_TMPDIR/rounds"
experiments/predict_vs_measure --only=zo2_compute-bound --rounds=2 --steps=4 --warmup=1 \
  --programs_dir=. --out_dir="$rounds" >"$TEST_TMPDIR/log" 2>&1 \
  || fail "--rounds=2 exited $?: $(cat "$TEST_TMPDIR/log")"
[ -s "$rounds/zo2_compute-bound/local_cpu.calibrated.pbtxt" ] &&
  [ -s "$rounds/zo2_compute-bound/round2/local_cpu.calibrated.pbtxt" ] &&
  [ -s "$rounds/zo2_compute-bound/round2/trace.json" ] \
  || fail "--rounds=2: want each round calibrated and run: $(find "$rounds" -maxdepth 3)"
[ "$(grep -c '^zo2_compute-bound/round2 .*predicted .* ms  measured' "$TEST_TMPDIR/log")" -eq 1 ] \
  || fail "--rounds=2: no progress line of round 2: $(cat "$TEST_TMPDIR/log")"
awk -F, 'NR == 1 && ($24 != "rounds" || $30 != "rounds_agree_overlap") { bad = 1 }
         NR > 1 && ($1 != "zo2_compute-bound" || $24 != 2) { bad = 1 }
         NR > 1 && ($30 !~ /^[01]$/ || $31 !~ /^[01]$/) { bad = 1 }
         END { exit bad || NR != 2 }' "$rounds/predict_vs_measure.csv" \
  || fail "--rounds=2: want one row of 2 rounds: $(cat "$rounds/predict_vs_measure.csv")"
grep -q "^summary: 1 schedules (each the median of its 2 rounds), median |error| " \
  "$rounds/predict_vs_measure.md" \
  || fail "--rounds=2: no summary of medians: $(cat "$rounds/predict_vs_measure.md")"
grep -Eq "^the rounds against each other .*: overlap within target in [01] of 1, exposed \
communication in [01] of 1$" "$rounds/predict_vs_measure.md" \
  || fail "--rounds=2: no line of the rounds' agreement: $(cat "$rounds/predict_vs_measure.md")"
echo PASS
