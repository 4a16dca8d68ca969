#!/usr/bin/env bash
# Resume from a checkpoint + trajectory log reproduces the uninterrupted
# run's weights bit for bit (on 2 ranks, sliced, with FP16 host storage so
# that the checkpoint's storage dtypes matter).
set -uo pipefail
train=train/train
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

# refused WHY args...: train refuses with exit 2 before any rank starts,
# saying WHY in one line of its own (no rank's, none of Open MPI's).
refused() {
  local why=$1; shift
  out=$($train "${common[@]}" "$@" 2>&1); code=$?
  [ "$code" -eq 2 ] || fail "$*: exit $code, expected 2: $out"
  grep -q -- "$why" <<<"$out" || fail "$*: no '$why' in: $out"
  [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q "^train: " <<<"$out" ||
    fail "$*: not one line from the launcher: $out"
}
# Resuming a finished run asks for more steps.
refused "already has 30 steps (0..29), as many as --steps=30 asks for: give --steps=N with N > 30" \
  --steps=30 --resume --out_dir="$TEST_TMPDIR/split"
# The run's identity includes its data: the same examples read from a
# copy resume (the fingerprint is of the examples), a reordered train.tsv
# does not.
cp -r "$TEST_TMPDIR/split/data" "$TEST_TMPDIR/same"
cp -r "$TEST_TMPDIR/split" "$TEST_TMPDIR/copy"
out=$($train "${common[@]}" --steps=31 --resume --data="$TEST_TMPDIR/same" \
  --out_dir="$TEST_TMPDIR/copy" 2>&1) || fail "the same examples from a copy: $out"
cp -r "$TEST_TMPDIR/split/data" "$TEST_TMPDIR/reordered"
sed -i '2{h;d};3{G}' "$TEST_TMPDIR/reordered/train.tsv"  # the first two examples swapped
cmp -s "$TEST_TMPDIR/split/data/train.tsv" "$TEST_TMPDIR/reordered/train.tsv" && fail "not reordered"
refused "was written by a run on other data: it trained on --data=synthetic --task=sst2, this run reads --data=$TEST_TMPDIR/reordered --task=sst2" \
  --steps=40 --resume --data="$TEST_TMPDIR/reordered" --out_dir="$TEST_TMPDIR/split"
# An entry past the checkpoint is replayed only if this run would have
# drawn it: its seed and learning rate are checked (g cannot be).
log="$TEST_TMPDIR/split/trajectory.log"
cp "$log" "$log.good"
seed=$(tail -1 "$log" | cut -d' ' -f2)
echo "30 $seed 0.5 0.000199999995" >>"$log"  # step 29's seed at step 30
refused "trajectory.log: step 30 has seed $seed, but this run (base seed 3) draws" \
  --steps=40 --resume --out_dir="$TEST_TMPDIR/split"
cp "$log.good" "$log"
# Resumed with another ε: the schedule differs.
refused "was written by another schedule" --epsilon=2e-3 --steps=40 --resume --out_dir="$TEST_TMPDIR/split"

# n-SPSA: a run of 3 directions a step, each of 3 ranks taking a direction
# (P = 3), resumes to its uninterrupted weights too; its log (format v2)
# holds every direction's seed and g.
q3=(--strategy=distzo2 --pertp=3 --dp=1 --ranks=3 --directions=3 --batch=4 --seq=24 --lr=2e-4
    --seed=3 --eval_examples=32)
full=$($train "${q3[@]}" --steps=20 --out_dir="$TEST_TMPDIR/q3_full" 2>&1) || fail "q=3 full: $full"
first=$($train "${q3[@]}" --steps=7 --out_dir="$TEST_TMPDIR/q3_split" 2>&1) || fail "q=3 first: $first"
second=$($train "${q3[@]}" --steps=20 --resume --out_dir="$TEST_TMPDIR/q3_split" 2>&1) ||
  fail "q=3 resumed: $second"
c=$(sed -n 's/^final weights checksum: //p' <<<"$full")
d=$(sed -n 's/^final weights checksum: //p' <<<"$second")
[ -n "$c" ] && [ "$c" = "$d" ] || fail "q=3: resumed checksum '$d' != uninterrupted '$c'"
[ "$c" != "$a" ] || fail "q=3 ended where one direction did"
cmp -s "$TEST_TMPDIR/q3_full/trajectory.log" "$TEST_TMPDIR/q3_split/trajectory.log" ||
  fail "q=3: trajectory logs differ"
head -1 "$TEST_TMPDIR/q3_split/trajectory.log" |
  grep -q "^# zosched trajectory v2 base_seed=3 directions=3$" || fail "q=3: not a v2 log"
[ "$(tail -1 "$TEST_TMPDIR/q3_split/trajectory.log" | wc -w)" -eq 8 ] ||
  fail "q=3: a step's line lacks a direction's seed or g"
# Resumed with another number of directions: refused, the log saying why.
out=$($train "${q3[@]/--directions=3/--directions=6}" --steps=30 --resume \
  --out_dir="$TEST_TMPDIR/q3_split" 2>&1)
code=$?
[ "$code" -eq 2 ] && grep -q "header directions=3 does not match the run.s directions=6" <<<"$out" ||
  fail "q=3 resumed with --directions=6: exit $code: $out"
# LoRA: the run's checkpoint holds the frozen base (in its FP16 store) and
# the adapters; resumed, the adapters end where the uninterrupted run's do.
lora=("${common[@]/--lr=2e-4/--lr=1e-2}" --peft=lora --lora_rank=4)
full=$($train "${lora[@]}" --steps=20 --out_dir="$TEST_TMPDIR/lora_full" 2>&1) || fail "LoRA full: $full"
first=$($train "${lora[@]}" --steps=8 --out_dir="$TEST_TMPDIR/lora_split" 2>&1) ||
  fail "LoRA first: $first"
second=$($train "${lora[@]}" --steps=20 --resume --out_dir="$TEST_TMPDIR/lora_split" 2>&1) ||
  fail "LoRA resumed: $second"
e=$(sed -n 's/^final weights checksum: //p' <<<"$full")
f=$(sed -n 's/^final weights checksum: //p' <<<"$second")
[ -n "$e" ] && [ "$e" = "$f" ] || fail "LoRA: resumed checksum '$f' != uninterrupted '$e'"
# Resumed with another rank: another schedule, refused.
out=$($train "${lora[@]/--lora_rank=4/--lora_rank=2}" --steps=30 --resume \
  --out_dir="$TEST_TMPDIR/lora_split" 2>&1) && fail "LoRA resumed at rank 2: $out"
grep -q "was written by another schedule" <<<"$out" || fail "LoRA resumed at rank 2: $out"
# A prefix: started from the base's activations, checkpointed with it,
# resumed to the uninterrupted run's checksum.
prefix=("${common[@]/--lr=2e-4/--lr=1e-2}" --peft=prefix --prefix_tokens=3)
full=$($train "${prefix[@]}" --steps=20 --out_dir="$TEST_TMPDIR/prefix_full" 2>&1) ||
  fail "prefix full: $full"
first=$($train "${prefix[@]}" --steps=8 --out_dir="$TEST_TMPDIR/prefix_split" 2>&1) ||
  fail "prefix first: $first"
second=$($train "${prefix[@]}" --steps=20 --resume --out_dir="$TEST_TMPDIR/prefix_split" 2>&1) ||
  fail "prefix resumed: $second"
g=$(sed -n 's/^final weights checksum: //p' <<<"$full")
h=$(sed -n 's/^final weights checksum: //p' <<<"$second")
[ -n "$g" ] && [ "$g" = "$h" ] || fail "prefix: resumed checksum '$h' != uninterrupted '$g'"
echo "PASS: $a; 3 directions: $c; LoRA: $e; prefix: $g"
