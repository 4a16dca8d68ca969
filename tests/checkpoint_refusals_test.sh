#!/usr/bin/env bash
# --resume refuses a checkpoint that is not this run's (corrupted, the final
# weights file, another run's, another schedule's or model's) and flags that
# contradict it, each with a clear message and a non-zero exit; --init
# refuses a run checkpoint, NaN or Inf weights and paths that are not files
# (exit 2) and takes a finished run's weights; a fresh run does not
# overwrite a run's outputs unless asked to.
set -uo pipefail
train="$PWD/train/train"
fail() { echo "FAIL: $*" >&2; exit 1; }
# Each command gives --steps itself: train refuses a flag given twice.
common=(--batch=4 --seq=24 --eval_examples=16 --checkpoint_every=10)
run() { timeout 120 "$train" "${common[@]}" "$@" 2>&1; }
run --steps=20 --out_dir="$TEST_TMPDIR/a" >/dev/null || fail "run a"
run --steps=20 --out_dir="$TEST_TMPDIR/b" --init_seed=2 >/dev/null || fail "run b"

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
expect_refusal "resume with the flags" "true" --lr=1e-3
sed 's/^name: .*/name: "opt-tiny-renamed"/' models/zoo/opt-tiny.pbtxt >"$TEST_TMPDIR/renamed.pbtxt"
expect_refusal "checkpoint of model 'opt-tiny', but this run trains 'opt-tiny-renamed'" "true" \
  --model="$TEST_TMPDIR/renamed.pbtxt"
expect_refusal "includes 20 steps but trajectory.log has only 15" "head -16 trajectory.log >t && mv t trajectory.log"
expect_refusal "checkpoint.safetensors" "rm checkpoint.safetensors"
expect_refusal "drop --init" "true" --init="$TEST_TMPDIR/a/weights.safetensors"
expect_refusal "give one" "true" --overwrite

# --init of a fresh run: expect_init_refusal "message" FILE, before any step.
expect_init_refusal() {
  local want=$1; n=$((n + 1))
  out=$(run --steps=20 --out_dir="$TEST_TMPDIR/case$n" --init="$2"); code=$?
  [ "$code" -eq 2 ] || fail "--init=$2: exit $code, expected 2 (bad input): $out"
  grep -qF -- "$want" <<<"$out" || fail "--init=$2: no '$want' in: $out"
  ! grep -q "^step" <<<"$out" || fail "--init=$2: trained before refusing: $out"
}
# put_f32 FILE INDEX HEX: element INDEX of the file's data buffer (F32) := HEX
# (4 little-endian bytes, e.g. 0000c07f: NaN).
put_f32() {
  local header; header=$(od -An -tu8 -N8 "$1" | tr -d ' ')
  printf "$(sed 's/../\\x&/g' <<<"$3")" |
    dd of="$1" bs=1 seek=$((8 + header + 4 * $2)) conv=notrunc status=none
}
# The run's checkpoint has its last update pending: starting from it would
# drop that update (it was accepted, silently).
expect_init_refusal "$TEST_TMPDIR/a/checkpoint.safetensors is a run checkpoint" \
  "$TEST_TMPDIR/a/checkpoint.safetensors"
grep -qF -- "--resume --out_dir=$TEST_TMPDIR/a" <<<"$out" || fail "no --resume advice: $out"
grep -qF -- "--init=$TEST_TMPDIR/a/weights.safetensors" <<<"$out" || fail "no weights advice: $out"
# NaN and Inf weights, named where they are (a NaN trained on; an Inf was
# blamed on trajectory.log).
cp "$TEST_TMPDIR/a/weights.safetensors" "$TEST_TMPDIR/nan.safetensors"
put_f32 "$TEST_TMPDIR/nan.safetensors" 70 0000c07f
expect_init_refusal "tensor 'model.decoder.embed_tokens.weight' element 70 ([1, 6] in shape [576, 64]) is nan" \
  "$TEST_TMPDIR/nan.safetensors"
cp "$TEST_TMPDIR/a/weights.safetensors" "$TEST_TMPDIR/inf.safetensors"
put_f32 "$TEST_TMPDIR/inf.safetensors" 3 000080ff
expect_init_refusal "tensor 'model.decoder.embed_tokens.weight' element 3 ([0, 3] in shape [576, 64]) is -inf" \
  "$TEST_TMPDIR/inf.safetensors"
# Paths that are not checkpoints (a directory failed in mmap, "No such
# device"; /dev/zero passed for a truncated file). A run's directory holds
# no model.safetensors: the message names the files it does hold.
expect_init_refusal "$TEST_TMPDIR/a is a directory holding neither model.safetensors nor model.safetensors.index.json" "$TEST_TMPDIR/a"
expect_init_refusal "/dev/zero is not a regular file (a character device); expected a .safetensors file" \
  /dev/zero
# A finished run's final weights (update applied) start a fresh run.
out=$(run --out_dir="$TEST_TMPDIR/from_weights" --steps=2 --init="$TEST_TMPDIR/a/weights.safetensors") ||
  fail "--init of a run's weights.safetensors: $out"

# The untouched run resumes (the refusals above were about the files).
cp -r "$TEST_TMPDIR/a" "$TEST_TMPDIR/good"
out=$(timeout 120 "$train" "${common[@]}" --steps=30 --resume --out_dir="$TEST_TMPDIR/good" 2>&1) ||
  fail "an intact run did not resume: $out"

# A fresh run into a run's directory: refused, unless --overwrite.
out=$(run --steps=20 --out_dir="$TEST_TMPDIR/a"); code=$?
[ "$code" -eq 2 ] && grep -q "is not empty" <<<"$out" || fail "fresh run into a run's dir: exit $code: $out"
run --out_dir="$TEST_TMPDIR/a" --overwrite --steps=5 >/dev/null || fail "--overwrite"
[ "$(wc -l <"$TEST_TMPDIR/a/trajectory.log")" -eq 6 ] || fail "--overwrite kept the old log"
echo "PASS: $n refusals"
