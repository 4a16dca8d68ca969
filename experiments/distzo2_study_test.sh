#!/usr/bin/env bash
# distzo2_study end to end: it writes the table (markdown + CSV), one Chrome
# trace and one picture per case, every case is predicted kernel by kernel
# under zosched's CUDA profile with its roofline floor beside it (never
# above the prediction), and the predictions keep the study's qualitative
# findings.
set -uo pipefail
out="$TEST_TMPDIR/study"
fail() { echo "FAIL: $*" >&2; exit 1; }
source "$PWD/experiments/study_outputs.sh"
run_study distzo2_study 18
for f in "$out"/pictures/*.png; do
  head -c 4 "$f" | od -An -c | grep -q "P   N   G" || fail "$f is not a PNG"
done
grep -q '"traceEvents"' "$out"/traces/1_*sliced.json || fail "trace JSON"

# field NAME CASE SCHEDULE: the CSV column NAME of that row.
field() {
  awk -F, -v col="$1" -v want="\"$2\",\"$3\"" '
    NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
    index($0, want ",") == 1 { print $c }' "$out/study.csv"
}
faster() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
s1="1 OPT-1.3B DGX A100 4 GPUs P2xD2"
faster "$(field step_ms "$s1" sliced)" "$(field step_ms "$s1" naive)" || fail "sliced is not faster than naive"
s2="2 OPT-1.3B 2x H100 NVLink vs PCIe"
faster "$(field step_ms "$s2" "PertP NVLink")" "$(field step_ms "$s2" "PertP PCIe")" || fail "NVLink not faster"
grep -q "x |$" "$out/study.md" || fail "no speedup column for OPT-175B"

# The profile, the kernel-level step and the floor, in both tables.
grep -qF "| case | schedule | profile | step ms | floor ms |" "$out/study.md" || fail "markdown columns"
head -1 "$out/study.csv" | grep -q "^case,schedule,compute_profile,step_ms,roofline_step_ms," ||
  fail "CSV columns: $(head -1 "$out/study.csv")"
check_floors "$out/study.csv"
[ "$(csv_columns "$out/study.csv" compute_profile | sort -u)" = zosched_cuda ] ||
  fail "profiles: $(csv_columns "$out/study.csv" compute_profile | sort -u)"
echo PASS
