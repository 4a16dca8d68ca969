#!/usr/bin/env bash
# calibrate's bad flags and inputs: exit 2 with the flag, the value and the
# range, before anything is measured (each run must end at once).
set -uo pipefail
calibrate="$PWD/runtime/calibrate"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect2() {  # expect2 "message" args...
  local want="$1"; shift
  out=$(timeout 30 "$calibrate" --out="$TEST_TMPDIR/c.pbtxt" "$@" 2>&1); code=$?
  [ "$code" -eq 2 ] || fail "$* exited $code (want 2): $out"
  grep -qF -- "$want" <<<"$out" || fail "$*: no '$want' in: $out"
}
expect2 "--repeats=0: expected 1 to 1000 (timed runs)" --repeats=0
expect2 "--batch=-4: expected 1 to" --batch=-4
expect2 "--seq=0: expected 1 to" --seq=0
expect2 "seq_len is 100 (expected 1 to model 'opt-tiny' max_positions 64)" --seq=100
expect2 "unknown cluster 'nope'" --cluster=nope
expect2 "unknown model 'opt-7b'" --model=opt-7b
[ ! -e "$TEST_TMPDIR/c.pbtxt" ] || fail "a failed calibration wrote its output"
echo PASS
