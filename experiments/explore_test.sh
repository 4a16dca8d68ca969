#!/usr/bin/env bash
# explore end to end on a small sweep: every row of configurations.csv
# agrees with `lower` and `simulate` run one by one on the same flags, its
# compute profile and the cluster file explore wrote (the step time and its
# roofline floor to the microsecond; a plan that does not fit, with lower's
# own reason); a roofline sweep's steps are their floors; pruning keeps the
# best; the
# pictures and best schedules exist; a bad sweep is refused with its place;
# a sweep nothing of which is ranked says why and draws nothing; a used
# output directory is refused, or cleared of the earlier run with
# --overwrite; the shipped sweeps run, and peft_vs_full's rows (every
# parameter, LoRA, a prefix) agree with `lower` and `simulate` as the small
# sweep's do.
set -uo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
out="$TEST_TMPDIR/small"
sweep=experiments/testdata/small_sweep.pbtxt
experiments/explore --sweep="$sweep" --out_dir="$out" --threads=2 >"$TEST_TMPDIR/stdout" \
  || fail "explore exited $?"
csv="$out/configurations.csv"
rows=$(($(wc -l <"$csv") - 1))
[ "$rows" -eq 40 ] || fail "expected 40 configurations, got $rows"

# Every row of DIR/configurations.csv agrees with `lower` and `simulate` run
# on its flags; counts the rows that fit (checked) and that lower refused
# (refused).
check_rows() {  # DIR
  local dir=$1
  checked=0 refused=0
  while IFS= read -r line; do
    IFS=, read -r model batch seq micro cluster _ _ _ _ _ _ _ _ _ _ strategy directions peft \
      pertp dp slicing slots wire precision recompute _ profile state _ step_ms roofline_ms _ \
      <<<"$line"
    reason=$(cut -d, -f42- <<<"$line" | sed 's/^"//; s/"$//; s/""/"/g')
    file="$dir/clusters/$(sed -E 's/[^A-Za-z0-9.-]+/_/g; s/_$//' <<<"$cluster").pbtxt"
    [ -f "$file" ] || fail "no cluster file $file"
    flags=(--model="$model" --cluster="$file" --strategy="$strategy" --batch="$batch" --seq="$seq"
           --micro_batch="$micro" --compute_profile="$profile")
    case "$strategy" in
      mezo | zo2 | distzo2) [ "$profile" = zosched_cuda ] || fail "$model $strategy: profile $profile" ;;
      *) [ "$profile" = pytorch_first_order ] || fail "$model $strategy: profile $profile" ;;
    esac
    [ -n "$directions" ] && flags+=(--directions="$directions")
    [[ "$peft" == "lora r"* ]] && flags+=(--peft=lora --lora_rank="${peft#lora r}")
    [[ "$peft" == "prefix k"* ]] && flags+=(--peft=prefix --prefix_tokens="${peft#prefix k}")
    [ -n "$pertp" ] && flags+=(--pertp="$pertp")
    [ -n "$dp" ] && [ "$strategy" != zo2 ] && [ "$strategy" != mezo ] && flags+=(--dp="$dp")
    [ "$slicing" = naive ] && flags+=(--slicing=false)
    [ -n "$slots" ] && flags+=(--block_slots="$slots")
    [ -n "$wire" ] && [ "$wire" != host ] && flags+=(--wire_dtype="$wire")
    [ -n "$precision" ] && flags+=(--precision="$precision")
    [ "$recompute" = on ] && flags+=(--recompute)
    if schedule/lower "${flags[@]}" --out="$TEST_TMPDIR/s.pb" >/dev/null 2>"$TEST_TMPDIR/err"; then
      [ "$state" = fits ] || fail "$model $cluster $strategy: lower fits, explore says $state"
      sim/simulate --schedule="$TEST_TMPDIR/s.pb" >"$TEST_TMPDIR/sim.out" || fail "simulate exited $?"
      sim=$(sed -n 's/^step time: \([0-9.]*\) ms.*/\1/p' "$TEST_TMPDIR/sim.out")
      want=$(awk -v v="$step_ms" 'BEGIN { printf "%.3f", v }')
      [ "$sim" = "$want" ] || fail "$model $cluster $strategy ${flags[*]}: simulate $sim ms, csv $want"
      sim=$(sed -n 's/^compute profile: .*; floor (every compute op at its roofline): \([0-9.]*\) ms$/\1/p' \
        "$TEST_TMPDIR/sim.out")
      want=$(awk -v v="$roofline_ms" 'BEGIN { printf "%.3f", v }')
      [ "$sim" = "$want" ] || fail "$model $cluster $strategy: simulate's floor $sim ms, csv $want"
      awk -v s="$step_ms" -v f="$roofline_ms" 'BEGIN { exit !(s >= f && f > 0) }' ||
        fail "$model $cluster $strategy: step $step_ms ms below its floor $roofline_ms ms"
      checked=$((checked + 1))
    else
      [ "$state" = "does not fit" ] || fail "$model $cluster $strategy: lower refused, csv $state"
      grep -qF -- "${reason:0:80}" "$TEST_TMPDIR/err" || fail "reason '$reason' not in: $(cat "$TEST_TMPDIR/err")"
      refused=$((refused + 1))
    fi
  done < <(tail -n +2 "$dir/configurations.csv")
}
check_rows "$out"
[ "$checked" -eq 37 ] && [ "$refused" -eq 3 ] || fail "checked $checked fits, $refused refusals"

grep -q "^| 1 | " "$out/best.md" || fail "no best table"
grep -qF "| GPUs | profile | step ms | floor ms | tokens/s |" "$out/best.md" || fail "best.md columns"
grep -qF "Compute: each configuration's kernel-level profile" "$out/best.md" || fail "best.md profile"
[ "$(ls "$out"/best/*.pb | wc -l)" -eq 4 ] || fail "expected 4 best schedules"
sim/simulate --schedule="$(ls "$out"/best/01_*.pb)" >"$TEST_TMPDIR/best.out" || fail "best schedule 1 does not simulate"
grep -q "^compute profile: ZOSCHED_CUDA\|^compute profile: PYTORCH_FIRST_ORDER" "$TEST_TMPDIR/best.out" ||
  fail "best schedule 1 lost its profile: $(head -3 "$TEST_TMPDIR/best.out")"
for png in pareto_gpus pareto_cost heatmap_device_memory_gib_by_strategy; do
  head -c 4 "$out/$png.png" | od -An -c | grep -q "P   N   G" || fail "no $png.png"
done

# Pruning skips simulations but keeps the best four.
experiments/explore --sweep="$sweep" --out_dir="$out.pruned" --threads=2 --prune \
  >"$TEST_TMPDIR/stdout.pruned" || fail "explore --prune exited $?"
diff <(grep "^| [0-9]" "$out/best.md") <(grep "^| [0-9]" "$out.pruned/best.md") \
  || fail "pruning changed the best configurations"

# A roofline sweep: every step is its own floor, and the ranking is the
# roofline's.
sed 's/^best: 4/best: 4\ncompute_profile: "roofline"/' "$sweep" >"$TEST_TMPDIR/roofline.pbtxt"
experiments/explore --sweep="$TEST_TMPDIR/roofline.pbtxt" --out_dir="$out.roofline" --threads=2 \
  >/dev/null || fail "roofline sweep exited $?"
grep -qF "Compute: roofline for every configuration" "$out.roofline/best.md" || fail "roofline best.md"
tail -n +2 "$out.roofline/configurations.csv" | awk -F, '
  $26 == "fits" && ($25 != "roofline" || $28 != $29) { print; bad = 1 } END { exit bad }' ||
  fail "a roofline step that is not its floor"

# A knob a strategy has no use for is refused, naming the file and the place.
sed 's/strategies { kind: MEZO }/strategies { kind: MEZO block_slots: 2 }/' "$sweep" >"$TEST_TMPDIR/bad.pbtxt"
experiments/explore --sweep="$TEST_TMPDIR/bad.pbtxt" --out_dir="$out.bad" 2>"$TEST_TMPDIR/err"
[ $? -eq 2 ] || fail "bad sweep: exit status"
grep -q "bad.pbtxt: strategies\[0\] (MEZO): block_slots applies to ZO2 and DISTZO2" "$TEST_TMPDIR/err" \
  || fail "bad sweep message: $(cat "$TEST_TMPDIR/err")"
# Each refusal: exit status 2 and a message naming the file and the field.
expect_refusal() {  # SED_EXPRESSION EXPECTED_MESSAGE
  sed "$1" "$sweep" >"$TEST_TMPDIR/bad.pbtxt"
  experiments/explore --sweep="$TEST_TMPDIR/bad.pbtxt" --out_dir="$TEST_TMPDIR/refused" \
    >/dev/null 2>"$TEST_TMPDIR/err"
  local status=$?
  [ "$status" -eq 2 ] || fail "$1: exit status $status"
  grep -qF -- "$2" "$TEST_TMPDIR/err" || fail "$1: expected '$2' in: $(cat "$TEST_TMPDIR/err")"
  [ ! -e "$TEST_TMPDIR/refused" ] || fail "$1: wrote $TEST_TMPDIR/refused"
}
expect_refusal 's/max_gpus: 2/max_gpus: 2 min_tokens_per_s: nan/' \
  "bad.pbtxt: constraints.min_tokens_per_s is nan (expected a finite number of tokens/s >= 0"
expect_refusal 's/^name: "small"//' "bad.pbtxt: name is missing"
expect_refusal 's/models: \["opt-1.3b", "opt-13b"\]/models: ["opt-1.3b", "opt-13b", "opt-1.3b"]/' \
  "bad.pbtxt: models[2]: 'opt-1.3b' is models[0] again"
expect_refusal 's/^best: 4/best: 4\ncompute_profile: "flash"/' \
  "bad.pbtxt: compute_profile 'flash' is not a compute profile (expected roofline, zosched_cuda, pytorch_mezo, pytorch_zo2, pytorch_first_order or megatron_first_order"
expect_refusal 's/^best: 4/best: 4\ncompute_profile: "pytorch_first_order"/' \
  "bad.pbtxt: compute_profile 'pytorch_first_order' cannot cost strategies[0] (MEZO) of models[0] 'opt-1.3b': pytorch_first_order (PyTorch eager training) runs the first-order strategies (SINGLE_DEVICE, DDP, ZERO_1/2/3), not MEZO (expected zosched_cuda, pytorch_mezo, pytorch_zo2 or roofline)"
expect_refusal 's/models: \["opt-1.3b", "opt-13b"\]/models: ["opt-1.3b", "llama2-7b"]/' \
  "bad.pbtxt: strategies[3] (DDP, precision AMP_FP32_MASTER) of models[1] 'llama2-7b' has no kernel-level compute profile: pytorch_first_order (PyTorch eager training) runs OPT and GPT-2 models, not LLAMA"
axis=$(seq -s, 1 100)
expect_refusal "s/device_memory_gib: \[80, 24\]/host_link_gbps: [$axis] nvlink_gbps: [$axis] device_memory_gib: [$axis]/" \
  "bad.pbtxt: the cluster families have 1000000 members in all, above the limit of 10000: clusters[0] 1000000 (100 host_link_gbps × 100 nvlink_gbps × 100 device_memory_gib)"

# Nothing meets the constraints: an answer (status 0), said with the counts
# and the most common reasons; the tables are written, the empty pictures
# are not.
none="$TEST_TMPDIR/none"
sed 's/max_gpus: 2/max_gpus: 2 min_tokens_per_s: 1e12/' "$sweep" >"$TEST_TMPDIR/none.pbtxt"
experiments/explore --sweep="$TEST_TMPDIR/none.pbtxt" --out_dir="$none" >"$TEST_TMPDIR/stdout.none" \
  2>"$TEST_TMPDIR/err" || fail "nothing ranked: exit status $?"
for want in "40 configurations: 37 fit (0 of them meet the constraints), 3 do not fit, 0 invalid" \
    "**No configuration fits and meets the constraints.**" \
    "- 37 fit but miss the constraints, e.g. opt-1.3b on h100_sxm_x2[device_memory_gib=80], mezo: misses the constraints:" \
    "not drawn, as no configuration fits and meets the constraints: pareto_gpus.png, pareto_cost.png, heatmap_device_memory_gib_by_strategy.png"; do
  grep -qF -- "$want" "$TEST_TMPDIR/stdout.none" || fail "nothing ranked: no '$want' in: $(cat "$TEST_TMPDIR/stdout.none")"
done
grep -qF "no configuration fits and meets the constraints" "$TEST_TMPDIR/err" || fail "nothing ranked: stderr $(cat "$TEST_TMPDIR/err")"
grep -qF "**No configuration fits and meets the constraints.**" "$none/best.md" || fail "nothing ranked: best.md"
[ "$(($(wc -l <"$none/configurations.csv") - 1))" -eq 40 ] || fail "nothing ranked: configurations.csv"
grep -q "below min_tokens_per_s 1e+12" "$none/configurations.csv" || fail "nothing ranked: no reason in the csv"
[ -z "$(ls "$none" | grep -v -x -e best.md -e configurations.csv -e clusters)" ] \
  || fail "nothing ranked: wrote $(ls "$none")"

# No configuration can be lowered: the sweep is bad input (status 2), and
# the reasons are still written.
sed 's/^seq_len: 512/seq_len: 4096/' "$sweep" >"$TEST_TMPDIR/invalid.pbtxt"
experiments/explore --sweep="$TEST_TMPDIR/invalid.pbtxt" --out_dir="$TEST_TMPDIR/invalid" \
  >"$TEST_TMPDIR/stdout.invalid" 2>"$TEST_TMPDIR/err"
status=$?
[ "$status" -eq 2 ] || fail "every configuration invalid: exit status $status"
grep -qF "none of the 40 configurations can be lowered" "$TEST_TMPDIR/err" || fail "invalid: $(cat "$TEST_TMPDIR/err")"
grep -qF -- "- 40 are invalid, e.g. opt-1.3b on h100_sxm_x2[device_memory_gib=80], mezo: training seq_len is 4096" \
  "$TEST_TMPDIR/invalid/best.md" || fail "invalid: best.md $(cat "$TEST_TMPDIR/invalid/best.md")"

# A used output directory is refused; --overwrite replaces the earlier
# run's files (another sweep's: 4 best schedules, a heat map, a cost chart)
# and keeps the user's.
touch "$out/notes.txt"
experiments/explore --sweep=experiments/sweeps/gh200_vs_h100_pcie.pbtxt --out_dir="$out" \
  >/dev/null 2>"$TEST_TMPDIR/err"
status=$?
[ "$status" -eq 2 ] || fail "used --out_dir: exit status $status"
grep -qF "$out is not empty (an earlier run's outputs?): --overwrite replaces the explorer's files there" \
  "$TEST_TMPDIR/err" || fail "used --out_dir: $(cat "$TEST_TMPDIR/err")"
experiments/explore --sweep=experiments/sweeps/gh200_vs_h100_pcie.pbtxt --out_dir="$out" --overwrite \
  >"$TEST_TMPDIR/stdout.overwrite" || fail "--overwrite: exit status $?"
[ "$(ls "$out"/best/*.pb | wc -l)" -eq 15 ] || fail "--overwrite: $(ls "$out"/best | wc -l) best schedules, expected 15"
! grep -q "h100_sxm_x2" <(ls "$out"/best "$out"/clusters) || fail "--overwrite kept the earlier run's files"
[ ! -e "$out/pareto_cost.png" ] && [ ! -e "$out/heatmap_device_memory_gib_by_strategy.png" ] \
  || fail "--overwrite kept the earlier run's pictures"
[ -e "$out/notes.txt" ] || fail "--overwrite removed a file the explorer did not write"
grep -q "^| 1 | opt-" "$out/best.md" || fail "--overwrite: best.md"

# The shipped sweeps run.
for shipped in experiments/sweeps/*.pbtxt; do
  name=$(basename "$shipped" .pbtxt)
  experiments/explore --sweep="$shipped" --out_dir="$TEST_TMPDIR/shipped/$name" \
    >"$TEST_TMPDIR/stdout.$name" 2>"$TEST_TMPDIR/err" || fail "$shipped: exit status $?: $(cat "$TEST_TMPDIR/err")"
  grep -q "^| 1 | " "$TEST_TMPDIR/shipped/$name/best.md" || fail "$shipped ranks nothing"
done
# The adapters' rows (every parameter, LoRA r8, prefix k5) lower and
# simulate one by one as explore costed them.
check_rows "$TEST_TMPDIR/shipped/peft_vs_full"
[ "$checked" -eq 36 ] && [ "$refused" -eq 0 ] || fail "peft_vs_full: checked $checked fits, $refused refusals"
grep -c ",prefix k5," "$TEST_TMPDIR/shipped/peft_vs_full/configurations.csv" | grep -qx 12 \
  || fail "peft_vs_full: expected 12 prefix k5 rows"
echo PASS
