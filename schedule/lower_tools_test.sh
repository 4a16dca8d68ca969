#!/usr/bin/env bash
# `lower` and `inspect` end to end: the README's command lines, the DistZO2
# host-link saving on OPT-175B, and the errors for bad flags (exit 2).
set -uo pipefail
lower=schedule/lower
inspect=schedule/inspect
tmp="$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }

$lower --model=opt-1.3b --cluster=dgx_a100 --strategy=distzo2 --pertp=2 --dp=2 \
  --slicing=true --batch=16 --seq=2048 --out="$tmp/s.pbtxt" || fail "lower exited $?"
head -1 "$tmp/s.pbtxt" | grep -q "proto-message: zosched.Schedule" || fail "not a textproto"
out=$($inspect "$tmp/s.pbtxt") || fail "inspect exited $?"
grep -q "^valid: 4 devices" <<<"$out" || fail "inspect: $out"
grep -q "peak memory (the plan)" <<<"$out" || fail "inspect: no peak memory"
grep -q "d0/slot2 *BLOCK_SLOT" <<<"$out" || fail "inspect: no buffers"

# OPT-175B on a DGX A100, P=2 x D=4, sliced: each GPU moves 1/8 of the blocks.
$lower --model=opt-175b --cluster=dgx_a100 --strategy=distzo2 --pertp=2 --dp=4 \
  --out="$tmp/175b.pb" || fail "lower opt-175b exited $?"
out=$($inspect "$tmp/175b.pb") || fail "inspect opt-175b exited $?"
n=$(grep -c "host link per step: .*0.125 of whole-block streaming" <<<"$out")
[ "$n" -eq 8 ] || fail "expected 8 devices at 1/8 of whole-block streaming: $out"

expect_exit2() {  # expect_exit2 "message regex" args...
  local want="$1"; shift
  err=$($lower "$@" --out="$tmp/x.pb" 2>&1 >/dev/null); code=$?
  [ "$code" -eq 2 ] || fail "$* exited $code, want 2"
  grep -q -- "$want" <<<"$err" || fail "$*: message '$err' lacks '$want'"
}
expect_exit2 "compute_profile='flash': expected roofline, zosched_cuda, pytorch_mezo or pytorch_zo2" \
  --model=opt-1.3b --cluster=h100_sxm_x1 --strategy=zo2 --compute_profile=flash
# A profile whose implementation does not run the schedule is refused when
# lowering, not at the first op `simulate` cannot cost.
expect_exit2 "compute_profile=zosched_cuda (zosched's CUDA backend) runs the ZO strategies (MEZO, ZO2, DISTZO2), not DDP (expected pytorch_first_order or roofline)" \
  --model=opt-125m --cluster=h100_sxm_x2 --strategy=ddp --dp=2 --compute_profile=zosched_cuda
expect_exit2 "pytorch_zo2 (ZO2's PyTorch code) runs OPT and GPT-2 models, not LLAMA" \
  --model=llama-tiny --cluster=h100_sxm_x1 --strategy=zo2 --seq=64 --compute_profile=pytorch_zo2
expect_exit2 "needs 4 (P·D = 2·2)" --model=opt-1.3b --cluster=dgx_a100 \
  --strategy=distzo2 --pertp=2 --dp=2 --devices=gpu0,gpu1
expect_exit2 "expected mezo, zo2, distzo2, single_device, ddp" --model=opt-1.3b --cluster=dgx_a100 --strategy=zo3
expect_exit2 "batch 16 is not a positive multiple of D = 3" --model=opt-1.3b --cluster=dgx_a100 \
  --strategy=distzo2 --dp=3
expect_exit2 "unknown cluster 'dgx_z100'" --model=opt-1.3b --cluster=dgx_z100 --strategy=zo2
expect_exit2 "over by" --model=opt-175b --cluster=dgx_a100 --strategy=mezo
# A model with nothing after its last block (opt-tiny's head is tied) is
# refused when read, not lowered into a schedule that fails its own
# validation.
sed 's/^final_norm: true/final_norm: false/' models/zoo/opt-tiny.pbtxt >"$tmp/no_final_norm.pbtxt"
expect_exit2 "has no parameters after its last block" --model="$tmp/no_final_norm.pbtxt"

err=$($inspect "$tmp/missing.pb" 2>&1); code=$?
[ "$code" -eq 2 ] || fail "inspect of a missing file exited $code"
echo PASS
