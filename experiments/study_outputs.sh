# Sourced by the studies' end-to-end tests, after they set $out and fail().
# run_study STUDY CASES: runs experiments/STUDY --out_dir="$out" (its stdout
# in $TEST_TMPDIR/stdout) and checks what every study writes: a study.md,
# a study.csv of CASES rows under its header, and CASES traces and pictures.
run_study() {
  experiments/$1 --out_dir="$out" >"$TEST_TMPDIR/stdout" || fail "exited $?"
  [ -s "$out/study.md" ] || fail "no study.md"
  local rows=$(($(wc -l <"$out/study.csv") - 1))
  [ "$rows" -eq "$2" ] || fail "study.csv has $rows rows, want $2"
  [ "$(ls "$out"/traces/*.json | wc -l)" -eq "$2" ] || fail "traces"
  [ "$(ls "$out"/pictures/*.png | wc -l)" -eq "$2" ] || fail "pictures"
}
