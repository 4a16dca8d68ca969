#!/usr/bin/env bash
# Resume from a checkpoint + trajectory log reproduces the uninterrupted
# run's weights bit for bit (on 2 ranks, sliced, with FP16 host storage so
# that the checkpoint's storage dtypes matter).
set -uo pipefail
train=runtime/train
fail() { echo "FAIL: $*" >&2; exit 1; }
common=(--strategy=distzo2 --pertp=2 --dp=1 --ranks=2 --batch=4 --seq=24 --lr=2e-4
        --host_dtype=FP16 --seed=3 --eval_examples=32)

full=$($train "${common[@]}" --steps=30 --out_dir="$TEST_TMPDIR/full" 2>&1) || fail "full run: $full"
first=$($train "${common[@]}" --steps=12 --out_dir="$TEST_TMPDIR/split" 2>&1) || fail "first half: $first"
second=$($train "${common[@]}" --steps=30 --resume --out_dir="$TEST_TMPDIR/split" 2>&1) \
  || fail "resumed run: $second"
a=$(sed -n 's/^final weights checksum: //p' <<<"$full")
b=$(sed -n 's/^final weights checksum: //p' <<<"$second")
[ -n "$a" ] && [ "$a" = "$b" ] || fail "resumed checksum '$b' != uninterrupted '$a'"
cmp -s "$TEST_TMPDIR/full/trajectory.log" "$TEST_TMPDIR/split/trajectory.log" \
  || fail "trajectory logs differ"
# Resuming a finished run asks for more steps.
out=$($train "${common[@]}" --steps=30 --resume --out_dir="$TEST_TMPDIR/split" 2>&1) \
  && fail "resuming a finished run succeeded"
grep -q "already has 30 steps" <<<"$out" || fail "no clear message: $out"
echo "PASS: $a"
