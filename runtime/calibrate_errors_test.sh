#!/usr/bin/env bash
# calibrate's bad flags and inputs: exit 2 with the flag, the value and the
# range, before anything is measured (each run must end at once); a backend
# this build or machine lacks is refused likewise.
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
expect2 "--backend='bogus': expected cpu or cuda" --backend=bogus
expect2 "--compute_dtype and --tf32 apply to --backend=cuda only" --compute_dtype=fp16
expect2 "--schedules applies to --backend=cuda only" --schedules=a.pb
expect2 "--threads=0: expected 1 to 256 (cores per device)" --threads=0
expect2 "--threads applies to --backend=cpu only" --backend=cuda --threads=2
expect2 "$TEST_TMPDIR/no_task/vocab.json" --data="$TEST_TMPDIR/no_task"
expect2 "--task=squad: expected sst2 or boolq" --task=squad
# --backend=cuda: a build without CUDA names --config=cuda. A --config=cuda
# build (CI runs the tests under it too) instead refuses a machine without a
# GPU, or with one the bad --repeats; it alone holds the GPU calibration.
out=$(timeout 30 "$calibrate" --out="$TEST_TMPDIR/c.pbtxt" --backend=cuda --repeats=0 2>&1); code=$?
[ "$code" -eq 2 ] || fail "--backend=cuda exited $code (want 2): $out"
if grep -qF "measured by calibrate --backend=cuda" "$calibrate"; then
  grep -qE "no CUDA GPU is visible|--repeats=0: expected 1 to 1000" <<<"$out" ||
    fail "--backend=cuda in a CUDA build: $out"
  # The schedule files are read and validated before a GPU is looked for.
  expect2 "$TEST_TMPDIR/none.pb" --backend=cuda --schedules="$TEST_TMPDIR/none.pb"
  expect2 "--schedules=',x': an empty file name" --backend=cuda --schedules=,x
  echo "not a schedule" >"$TEST_TMPDIR/bad.pb"
  expect2 "$TEST_TMPDIR/bad.pb" --backend=cuda --schedules="$TEST_TMPDIR/bad.pb"
else
  grep -qF -- "--backend=cuda: this build has no CUDA backend; build with --config=cuda" <<<"$out" ||
    fail "--backend=cuda without CUDA does not name --config=cuda: $out"
fi
[ ! -e "$TEST_TMPDIR/c.pbtxt" ] || fail "a failed calibration wrote its output"
echo PASS
