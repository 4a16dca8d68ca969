#!/usr/bin/env bash
# distzo2_study end to end: it writes the table (markdown + CSV), one Chrome
# trace and one picture per case, and the predictions keep the study's
# qualitative findings.
set -uo pipefail
out="$TEST_TMPDIR/study"
fail() { echo "FAIL: $*" >&2; exit 1; }
experiments/distzo2_study --out_dir="$out" >"$TEST_TMPDIR/stdout" || fail "exited $?"
[ -s "$out/study.md" ] || fail "no study.md"
rows=$(($(wc -l <"$out/study.csv") - 1))
[ "$rows" -eq 18 ] || fail "study.csv has $rows rows, want 18"
[ "$(ls "$out"/traces/*.json | wc -l)" -eq 18 ] || fail "traces"
[ "$(ls "$out"/pictures/*.png | wc -l)" -eq 18 ] || fail "pictures"
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
