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

# csv_columns FILE NAME...: the columns NAME... of every row of the CSV file
# FILE (its first line names the columns; fields quoted as RFC 4180), one
# row a line, tab-separated.
csv_columns() {
  local file=$1
  shift
  awk -v want="$*" '
    function fields(line, f,   n, i, c, quoted, cur) {
      n = 0; cur = ""; quoted = 0
      for (i = 1; i <= length(line); i++) {
        c = substr(line, i, 1)
        if (quoted && c == "\"" && substr(line, i + 1, 1) == "\"") { cur = cur c; i++ }
        else if (c == "\"") quoted = !quoted
        else if (c == "," && !quoted) { f[++n] = cur; cur = "" }
        else cur = cur c
      }
      f[++n] = cur
      return n
    }
    { n = fields($0, f) }
    NR == 1 { for (i = 1; i <= n; i++) col[f[i]] = i; k = split(want, w, " "); next }
    {
      row = ""
      for (i = 1; i <= k; i++) row = row (i > 1 ? "\t" : "") f[col[w[i]]]
      print row
    }' "$file"
}

# check_floors FILE: every prediction in FILE (a study's CSV) names its
# compute profile and has a kernel-level step_ms at or above its roofline
# floor roofline_step_ms > 0, equal to it under the roofline profile (rows
# with neither a profile nor a step, e.g. a plan that does not fit, predict
# nothing and are left out); fails naming the first row that does not.
check_floors() {
  csv_columns "$1" compute_profile step_ms roofline_step_ms | awk -F'\t' '
    $1 == "" && $2 == "" { next }
    $1 == "" || !($3 > 0) || $2 < $3 || ($1 == "roofline" && $2 != $3) {
      print "row " NR + 1 ": profile \"" $1 "\", step " $2 " ms, floor " $3 " ms"; exit 1 }' ||
    fail "$1: a prediction without its profile, or below its floor"
}
