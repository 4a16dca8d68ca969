#!/usr/bin/env bash
# first_order_study end to end: its tables, one trace and one picture per
# case, and the predictions keep what the published setups found: sharding
# lowers the per-GPU memory stage by stage, 2 GPUs nearly halve the step,
# FSDP FULL_SHARD moves more bytes than SHARD_GRAD_OP, and DP = 4's
# all-reduce costs gpt2-xl step time at batch 1 per GPU; each step is
# printed with its profile and its roofline floor.
set -uo pipefail
out="$TEST_TMPDIR/study"
fail() { echo "FAIL: $*" >&2; exit 1; }
source "$PWD/experiments/study_outputs.sh"
run_study first_order_study 10
head -c 4 "$out"/pictures/A_GPT-2_Large_2x_H100_AMP_DDP.png | od -An -c | grep -q "P   N   G" ||
  fail "no DDP picture"
# field NAME CASE: the CSV column NAME of the case whose label is CASE.
field() {
  awk -F, -v col="$1" -v want="\"$2\"" '
    NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
    $2 == want { print $c }' "$out/study.csv"
}
less() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
ddp=$(field peak_GB DDP)
z2=$(field peak_GB "FSDP SHARD_GRAD_OP (ZeRO-2)")
z3=$(field peak_GB "FSDP FULL_SHARD (ZeRO-3)")
less "$z2" "$ddp" && less "$z3" "$z2" || fail "peak memory not DDP > ZeRO-2 > ZeRO-3: $ddp $z2 $z3"
speedup=$(field speedup DDP)
less 1.8 "$speedup" && less "$speedup" 2.0 || fail "DDP speed-up over one GPU $speedup"
grep -q "146 ALL_GATHER" "$out/study.md" || fail "FULL_SHARD all-gathers: 2 micro-batches x 2 x 36 blocks + 2"
grep -q "37 ALL_REDUCE" "$out/study.md" || fail "DDP buckets"
less "$(field step_ms "DP 1")" "$(field step_ms "DP 4")" || fail "DP 4's all-reduce costs nothing"
less "$(field peak_GB "ZeRO-2 DP 8")" "$(field peak_GB "ZeRO-2 DP 2")" || fail "ZeRO-2 memory with DP"
# The profile, the kernel-level step and the floor beside it: setup A as
# PyTorch eager runs it, setup B (Megatron's recipe) as Megatron-LM runs it;
# no step below its floor.
grep -qF "| peak | profile | step ms | floor ms | speed-up |" "$out/study.md" || fail "setup A columns"
grep -qF "| peak GB | profile | step ms | floor ms |" "$out/study.md" || fail "setup B columns"
[ "$(field compute_profile DDP)" = pytorch_first_order ] || fail "DDP's profile $(field compute_profile DDP)"
[ "$(field compute_profile "DP 4")" = megatron_first_order ] || fail "Megatron's profile $(field compute_profile "DP 4")"
check_floors "$out/study.csv"
less "$(field roofline_step_ms DDP)" "$(field step_ms DDP)" || fail "DDP's kernel-level step at its floor"
echo PASS
