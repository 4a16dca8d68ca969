#!/usr/bin/env bash
# distzo2_study end to end: it writes the table (markdown + CSV), one Chrome
# trace and one picture per case, and the predictions keep the study's
# qualitative findings.
set -uo pipefail
out="$TEST_TMPDIR/study"
fail() { echo "FAIL: $*" >&2; exit 1; }
source "$PWD/experiments/study_outputs.sh"
run_study distzo2_study 18
for f in "$out"/pictures/*.png; do
  head -c 4 "$f" | od -An -c | grep -q "P   N   G" || fail "$f is not a PNG"
done
grep -q '"traceEvents"' "$out"/traces/1_*sliced.json || fail "trace JSON"

step() { grep -F "\"$1\",\"$2\"," "$out/study.csv" | cut -d, -f3; }
faster() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
s1="1 OPT-1.3B DGX A100 4 GPUs P2xD2"
faster "$(step "$s1" sliced)" "$(step "$s1" naive)" || fail "sliced is not faster than naive"
s2="2 OPT-1.3B 2x H100 NVLink vs PCIe"
faster "$(step "$s2" "PertP NVLink")" "$(step "$s2" "PertP PCIe")" || fail "NVLink not faster"
grep -q "x |$" "$out/study.md" || fail "no speedup column for OPT-175B"
echo PASS
