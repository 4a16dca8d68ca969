#!/usr/bin/env bash
# model_info end to end: the accounting line users script against, the
# default --seq_len (the model's max_positions), and the errors for an
# unknown name, a malformed file and a bad flag (exit 2, clear message).
set -uo pipefail
bin=models/model_info
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$($bin --model=opt-1.3b) || fail "opt-1.3b exited $?"
grep -qx "params: 1315758080" <<<"$out" || fail "no 'params: 1315758080' line in: $out"

out=$($bin --model=opt-175b --tensors) || fail "opt-175b exited $?"
grep -qx "params: 174604468224" <<<"$out" || fail "opt-175b params: $out"
grep -q "model.decoder.layers.0.fc1.weight  *\[49152, 12288\]" <<<"$out" || fail "tensor list: $out"

# LLaMA-3 (grouped-query k and v: 8 heads of 128) and Qwen3 (heads of 128
# whatever the hidden size, each with its own q and k norms).
out=$($bin --model=llama3.1-8b --tensors) || fail "llama3.1-8b exited $?"
grep -qx "params: 8030261248" <<<"$out" || fail "llama3.1-8b params: $out"
grep -q "model.layers.0.self_attn.k_proj.weight  *\[1024, 4096\]" <<<"$out" ||
  fail "llama3.1-8b tensor list: $out"
out=$($bin --model=qwen3-32b --tensors) || fail "qwen3-32b exited $?"
grep -qx "params: 32762123264" <<<"$out" || fail "qwen3-32b params: $out"
grep -q "model.layers.0.self_attn.q_norm.weight  *\[128\]" <<<"$out" || fail "qwen3-32b q_norm: $out"
grep -q "model.layers.0.self_attn.q_proj.weight  *\[8192, 5120\]" <<<"$out" ||
  fail "qwen3-32b q_proj: $out"

err=$($bin --model=opt-7b 2>&1 >/dev/null); code=$?
[ "$code" -eq 2 ] || fail "unknown model: exit $code, want 2"
grep -q "unknown model 'opt-7b'; known models: .*opt-1.3b" <<<"$err" || fail "unknown model message: $err"

broken="$TEST_TMPDIR/broken.pbtxt"
printf 'name: "broken"\nfamily: OPTT\n' >"$broken"
err=$($bin --model="$broken" 2>&1 >/dev/null); code=$?
[ "$code" -eq 2 ] || fail "malformed file: exit $code, want 2"
# protobuf reports a bad enum value at the token after it.
grep -q "$broken:[0-9]*:[0-9]*: Unknown enumeration value of \"OPTT\"" <<<"$err" || fail "malformed file message: $err"

err=$($bin 2>&1 >/dev/null); code=$?
[ "$code" -eq 2 ] || fail "no --model: exit $code, want 2"
grep -q -- "--model is required" <<<"$err" || fail "no --model message: $err"

huge="$TEST_TMPDIR/huge.pbtxt"
sed 's/^num_layers: .*/num_layers: 4000000000/' models/zoo/opt-tiny.pbtxt >"$huge"
err=$($bin --model="$huge" 2>&1 >/dev/null); code=$?
[ "$code" -eq 2 ] || fail "4e9 layers: exit $code, want 2"
grep -q "num_layers is 4000000000 (expected a positive integer up to 4096)" <<<"$err" ||
  fail "4e9 layers message: $err"

err=$($bin --model=opt-125m --seq_len=4096 2>&1 >/dev/null); code=$?
[ "$code" -eq 2 ] || fail "seq_len above max_positions: exit $code, want 2"
grep -q -- "--seq_len=4096: expected 1 to 2048" <<<"$err" || fail "seq_len message: $err"

# With no --seq_len the counts are at the model's own max_positions, so a
# model with a short context (opt-tiny: 64) works with no other flag.
out=$($bin --model=opt-tiny) || fail "opt-tiny with no other flag exited $?"
grep -q "forward FLOPs per token at seq_len 64:" <<<"$out" || fail "opt-tiny default seq_len: $out"
out=$($bin --model=opt-125m) || fail "opt-125m exited $?"
grep -q "forward FLOPs per token at seq_len 2048:" <<<"$out" || fail "opt-125m default seq_len: $out"
out=$($bin --model=opt-tiny --seq_len=16) || fail "opt-tiny --seq_len=16 exited $?"
grep -q "forward FLOPs per token at seq_len 16:" <<<"$out" || fail "opt-tiny --seq_len=16: $out"

# An explicit length outside 1 to max_positions stays an error.
err=$($bin --model=opt-tiny --seq_len=65 2>&1 >/dev/null); code=$?
[ "$code" -eq 2 ] || fail "opt-tiny --seq_len=65: exit $code, want 2"
grep -q -- "--seq_len=65: expected 1 to 64" <<<"$err" || fail "opt-tiny seq_len message: $err"
err=$($bin --model=opt-tiny --seq_len=-1 2>&1 >/dev/null); code=$?
[ "$code" -eq 2 ] || fail "--seq_len=-1: exit $code, want 2"
grep -q -- "--seq_len=-1: expected 1 to 64" <<<"$err" || fail "negative seq_len message: $err"

err=$($bin --model=opt-125m --dtype=FP8 2>&1 >/dev/null); code=$?
[ "$code" -eq 2 ] || fail "bad dtype: exit $code, want 2"
echo "PASS"
