#!/usr/bin/env bash
# model_info end to end: the accounting line users script against, and the
# errors for an unknown name and a malformed file (exit 2, clear message).
set -uo pipefail
bin=models/model_info
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$($bin --model=opt-1.3b) || fail "opt-1.3b exited $?"
grep -qx "params: 1315758080" <<<"$out" || fail "no 'params: 1315758080' line in: $out"

out=$($bin --model=opt-175b --tensors) || fail "opt-175b exited $?"
grep -qx "params: 174604468224" <<<"$out" || fail "opt-175b params: $out"
grep -q "model.decoder.layers.0.fc1.weight  *\[49152, 12288\]" <<<"$out" || fail "tensor list: $out"

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

err=$($bin --model=opt-125m --dtype=FP8 2>&1 >/dev/null); code=$?
[ "$code" -eq 2 ] || fail "bad dtype: exit $code, want 2"
echo "PASS"
