#!/usr/bin/env bash
# directions_study end to end, small: MeZO with 1 and 4 directions a step at
# 64 forward passes each (32 and 8 steps) writes one CSV row per step with
# the forwards counted 2q a step, a PNG, and each run's trajectory log with
# its directions; bad flags are refused before anything runs.
set -uo pipefail
out="$TEST_TMPDIR/study"
fail() { echo "FAIL: $*" >&2; exit 1; }
log=$(experiments/directions_study --programs_dir="$PWD" --out_dir="$out" --directions=1,4 \
      --forwards=64 --window=16 2>&1) || fail "exit $?: $log"
csv="$out/directions_study.csv"
[ "$(head -1 "$csv")" = "directions,step,forwards,loss,loss_over_window" ] || fail "header: $(head -1 "$csv")"
[ "$(grep -c '^1,' "$csv")" -eq 32 ] || fail "q=1: expected 32 steps"
[ "$(grep -c '^4,' "$csv")" -eq 8 ] || fail "q=4: expected 8 steps"
grep -q '^4,7,64,' "$csv" || fail "q=4's last step is not at 64 forwards"
grep -q '^1,31,64,' "$csv" || fail "q=1's last step is not at 64 forwards"
head -c 4 "$out/directions_study.png" | od -An -c | grep -q "P   N   G" || fail "no PNG"
head -1 "$out/q4/trajectory.log" | grep -q "directions=4$" || fail "q=4 log header"
grep -q "^4 .*final: dev accuracy" <<<"$log" || fail "no evaluation for q=4: $log"
bad=$(experiments/directions_study --programs_dir="$PWD" --out_dir="$out/bad" --directions=3 \
      --forwards=64 2>&1)
[ $? -eq 2 ] && grep -q "not a multiple of 2q = 6" <<<"$bad" || fail "bad forwards: $bad"
echo "$log"
echo PASS
