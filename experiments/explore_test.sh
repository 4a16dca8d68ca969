#!/usr/bin/env bash
# explore end to end on a small sweep: every row of configurations.csv
# agrees with `lower` and `simulate` run one by one on the same flags and the
# cluster file explore wrote (the step time to the microsecond; a plan that
# does not fit, with lower's own reason); pruning keeps the best; the
# pictures and best schedules exist; a bad sweep is refused with its place.
set -uo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
out="$TEST_TMPDIR/small"
sweep=experiments/testdata/small_sweep.pbtxt
experiments/explore --sweep="$sweep" --out_dir="$out" --threads=2 >"$TEST_TMPDIR/stdout" \
  || fail "explore exited $?"
csv="$out/configurations.csv"
rows=$(($(wc -l <"$csv") - 1))
[ "$rows" -eq 40 ] || fail "expected 40 configurations, got $rows"

checked=0 refused=0
while IFS= read -r line; do
  IFS=, read -r model batch seq micro cluster _ _ _ _ _ _ _ _ _ _ strategy pertp dp slicing \
    slots wire precision recompute _ state _ step_ms _ <<<"$line"
  reason=$(cut -d, -f38- <<<"$line" | sed 's/^"//; s/"$//; s/""/"/g')
  file="$out/clusters/$(sed -E 's/[^A-Za-z0-9.-]+/_/g; s/_$//' <<<"$cluster").pbtxt"
  [ -f "$file" ] || fail "no cluster file $file"
  flags=(--model="$model" --cluster="$file" --strategy="$strategy" --batch="$batch" --seq="$seq"
         --micro_batch="$micro")
  [ -n "$pertp" ] && flags+=(--pertp="$pertp")
  [ -n "$dp" ] && [ "$strategy" != zo2 ] && [ "$strategy" != mezo ] && flags+=(--dp="$dp")
  [ "$slicing" = naive ] && flags+=(--slicing=false)
  [ -n "$slots" ] && flags+=(--block_slots="$slots")
  [ -n "$wire" ] && [ "$wire" != host ] && flags+=(--wire_dtype="$wire")
  [ -n "$precision" ] && flags+=(--precision="$precision")
  [ "$recompute" = on ] && flags+=(--recompute)
  if schedule/lower "${flags[@]}" --out="$TEST_TMPDIR/s.pb" >/dev/null 2>"$TEST_TMPDIR/err"; then
    [ "$state" = fits ] || fail "$model $cluster $strategy: lower fits, explore says $state"
    sim=$(sim/simulate --schedule="$TEST_TMPDIR/s.pb" | sed -n 's/^step time: \([0-9.]*\) ms.*/\1/p')
    want=$(awk -v v="$step_ms" 'BEGIN { printf "%.3f", v }')
    [ "$sim" = "$want" ] || fail "$model $cluster $strategy ${flags[*]}: simulate $sim ms, csv $want"
    checked=$((checked + 1))
  else
    [ "$state" = "does not fit" ] || fail "$model $cluster $strategy: lower refused, csv $state"
    grep -qF -- "${reason:0:80}" "$TEST_TMPDIR/err" || fail "reason '$reason' not in: $(cat "$TEST_TMPDIR/err")"
    refused=$((refused + 1))
  fi
done < <(tail -n +2 "$csv")
[ "$checked" -eq 37 ] && [ "$refused" -eq 3 ] || fail "checked $checked fits, $refused refusals"

grep -q "^| 1 | " "$out/best.md" || fail "no best table"
[ "$(ls "$out"/best/*.pb | wc -l)" -eq 4 ] || fail "expected 4 best schedules"
sim/simulate --schedule="$(ls "$out"/best/01_*.pb)" >/dev/null || fail "best schedule 1 does not simulate"
for png in pareto_gpus pareto_cost heatmap_device_memory_gib_by_strategy; do
  head -c 4 "$out/$png.png" | od -An -c | grep -q "P   N   G" || fail "no $png.png"
done

# Pruning skips simulations but keeps the best four.
experiments/explore --sweep="$sweep" --out_dir="$out.pruned" --threads=2 --prune \
  >"$TEST_TMPDIR/stdout.pruned" || fail "explore --prune exited $?"
diff <(grep "^| [0-9]" "$out/best.md") <(grep "^| [0-9]" "$out.pruned/best.md") \
  || fail "pruning changed the best configurations"

# A knob a strategy has no use for is refused, naming the file and the place.
sed 's/strategies { kind: MEZO }/strategies { kind: MEZO block_slots: 2 }/' "$sweep" >"$TEST_TMPDIR/bad.pbtxt"
experiments/explore --sweep="$TEST_TMPDIR/bad.pbtxt" --out_dir="$out.bad" 2>"$TEST_TMPDIR/err"
[ $? -eq 2 ] || fail "bad sweep: exit status"
grep -q "bad.pbtxt: strategies\[0\] (MEZO): block_slots applies to ZO2 and DISTZO2" "$TEST_TMPDIR/err" \
  || fail "bad sweep message: $(cat "$TEST_TMPDIR/err")"
echo PASS
