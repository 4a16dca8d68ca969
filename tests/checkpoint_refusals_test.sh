#!/usr/bin/env bash
# --resume refuses a checkpoint that is not this run's (corrupted, the final
# weights file, another run's, another schedule's or model's) and flags that
# contradict it, each with a clear message and a non-zero exit; a fresh run
# does not overwrite a run's outputs unless asked to.
set -uo pipefail
train="$PWD/runtime/train"
fail() { echo "FAIL: $*" >&2; exit 1; }
common=(--steps=20 --batch=4 --seq=24 --eval_examples=16 --checkpoint_every=10)
run() { timeout 120 "$train" "${common[@]}" "$@" 2>&1; }
run --out_dir="$TEST_TMPDIR/a" >/dev/null || fail "run a"
run --out_dir="$TEST_TMPDIR/b" --init_seed=2 >/dev/null || fail "run b"

# expect_refusal "message" DIR_SETUP_COMMAND args...: copies run a, applies
# the setup, resumes it with args, and expects a failure naming the problem.
n=0
expect_refusal() {
  local want=$1 setup=$2; shift 2
  n=$((n + 1)); local dir="$TEST_TMPDIR/case$n"
  cp -r "$TEST_TMPDIR/a" "$dir"
  (cd "$dir" && eval "$setup")
  out=$(timeout 120 "$train" "${common[@]}" --steps=40 --resume --out_dir="$dir" "$@" 2>&1); code=$?
  [ "$code" -ne 0 ] || fail "resumed despite: $want"
  [ "$code" -ne 124 ] || fail "hung on: $want"
  grep -q -- "$want" <<<"$out" || fail "no '$want' in: $out"
}
flip_byte() {  # flips one bit of the file's last data byte
  local size; size=$(stat -c %s "$1")
  printf "$(printf '\\%03o' $(( $(od -An -tu1 -j $((size - 3)) -N1 "$1") ^ 16 )))" |
    dd of="$1" bs=1 seek=$((size - 3)) conv=notrunc status=none
}
expect_refusal "is corrupted" "flip_byte checkpoint.safetensors"
expect_refusal "holds weights, not a run checkpoint" "cp weights.safetensors checkpoint.safetensors"
expect_refusal "belongs to another run" "cp $TEST_TMPDIR/b/checkpoint.safetensors ."
expect_refusal "written by another schedule" "true" --lr=1e-3
sed 's/^name: .*/name: "opt-tiny-renamed"/' models/zoo/opt-tiny.pbtxt >"$TEST_TMPDIR/renamed.pbtxt"
expect_refusal "checkpoint of model 'opt-tiny', but this run trains 'opt-tiny-renamed'" "true" \
  --model="$TEST_TMPDIR/renamed.pbtxt"
expect_refusal "includes 20 steps but trajectory.log has only 15" "head -16 trajectory.log >t && mv t trajectory.log"
expect_refusal "checkpoint.safetensors" "rm checkpoint.safetensors"
expect_refusal "drop --init" "true" --init="$TEST_TMPDIR/a/weights.safetensors"
expect_refusal "give one" "true" --overwrite

# The untouched run resumes (the refusals above were about the files).
cp -r "$TEST_TMPDIR/a" "$TEST_TMPDIR/good"
out=$(timeout 120 "$train" "${common[@]}" --steps=30 --resume --out_dir="$TEST_TMPDIR/good" 2>&1) ||
  fail "an intact run did not resume: $out"

# A fresh run into a run's directory: refused, unless --overwrite.
out=$(run --out_dir="$TEST_TMPDIR/a"); code=$?
[ "$code" -eq 2 ] && grep -q "is not empty" <<<"$out" || fail "fresh run into a run's dir: exit $code: $out"
run --out_dir="$TEST_TMPDIR/a" --overwrite --steps=5 >/dev/null || fail "--overwrite"
[ "$(wc -l <"$TEST_TMPDIR/a/trajectory.log")" -eq 6 ] || fail "--overwrite kept the old log"
echo "PASS: $n refusals"
