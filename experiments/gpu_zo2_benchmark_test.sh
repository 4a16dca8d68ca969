#!/usr/bin/env bash
# The ZO2 GPU benchmark without a GPU (CUDA_VISIBLE_DEVICES is emptied, so a
# --config=cuda build on a GPU machine takes this path too): it lowers and
# predicts OPT-1.3B, 6.7B, 13B and 30B and Qwen3-1.7B, 8B and 32B, prints a table with the plan, the
# floor, the prediction and the kernel-level prediction for each (with the
# costliest kernels of a block), says "not run (no GPU)" in place of
# every measurement (no number is made up), runs the --models subset, and
# refuses a bad flag.
set -uo pipefail
out="$TEST_TMPDIR/bench"
fail() { echo "FAIL: $*" >&2; exit 1; }
CUDA_VISIBLE_DEVICES= experiments/gpu_zo2_benchmark --programs_dir=. --out_dir="$out" \
  >"$TEST_TMPDIR/log" 2>&1 || fail "exited $?: $(cat "$TEST_TMPDIR/log")"
md="$out/benchmark.md"
csv="$out/benchmark.csv"
[ -s "$md" ] && [ -s "$csv" ] || fail "no benchmark.{md,csv} in $out"
for m in opt-1.3b opt-6.7b opt-13b opt-30b qwen3-1.7b qwen3-8b qwen3-32b; do
  grep -q "^| $m | [0-9.]* | " "$md" || fail "$m: no row with a plan: $(cat "$md")"
  grep -q "^| $m .*| not run (no GPU) |" "$md" || fail "$m: measured column: $(cat "$md")"
  grep -q "^| $m |" "$TEST_TMPDIR/log" || fail "$m: table not printed"
done
grep -q "^measured: not run (no GPU)" "$md" || fail "no 'measured: not run (no GPU)' line"
[ "$(($(wc -l <"$csv") - 1))" -eq 7 ] || fail "want 7 rows: $(cat "$csv")"
# No ZO2 figure is made up for the Qwen3 rows: its measurement covers OPT only.
grep -q "^| qwen3-32b .*| - | - |$" "$md" || fail "qwen3-32b's ZO2 columns: $(cat "$md")"
# plan, floor and predicted step are numbers > 0, the kernel-level step at
# least the floor; the measured columns are empty.
awk -F, 'NR > 1 && !($2 > 0 && $7 > 0 && $8 > $7 && $9 > 0 && $10 >= $7 && $12 == "" &&
                     $16 == "") { bad = 1 }
         END { exit bad }' "$csv" || fail "bad numbers: $(cat "$csv")"
# Each step names the kernels that keep it from its floor.
for m in opt-1.3b qwen3-32b; do
  grep -q "^- $m: perturb (z) [0-9.]* ms, " "$md" || fail "$m: no costliest kernels: $(cat "$md")"
done
# The floor of OPT-30B FP16 on the H100 is its transfer: 59.2 GB each way at 45 GB/s.
awk -F, '$1 == "opt-30b" { found = 1; if ($5 < 1250 || $5 > 1400) bad = 1 } END { exit !found || bad }' \
  "$csv" || fail "opt-30b transfer floor off: $(cat "$csv")"
# --models runs a subset (a GPU session splits the measurement over calls).
CUDA_VISIBLE_DEVICES= experiments/gpu_zo2_benchmark --programs_dir=. --out_dir="$out/one" \
  --models=opt-6.7b >"$TEST_TMPDIR/one" 2>&1 || fail "--models=opt-6.7b exited $?: $(cat "$TEST_TMPDIR/one")"
[ "$(tail -n +2 "$out/one/benchmark.csv" | cut -d, -f1)" = opt-6.7b ] ||
  fail "--models=opt-6.7b: $(cat "$out/one/benchmark.csv")"
experiments/gpu_zo2_benchmark --models=opt-1.3b,opt-7b --out_dir="$out" >"$TEST_TMPDIR/bad" 2>&1
[ $? -eq 2 ] && grep -q "unknown model 'opt-7b'" "$TEST_TMPDIR/bad" ||
  fail "--models=opt-7b not refused: $(cat "$TEST_TMPDIR/bad")"
experiments/gpu_zo2_benchmark --repeats=0 --out_dir="$out" >"$TEST_TMPDIR/bad" 2>&1
[ $? -eq 2 ] && grep -q -- "--repeats=0" "$TEST_TMPDIR/bad" || fail "--repeats=0 not refused: $(cat "$TEST_TMPDIR/bad")"
echo PASS
