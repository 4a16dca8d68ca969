#!/usr/bin/env bash
# GPU against the CPU testbed, whole runs: the same MeZO run (seeds, data,
# micro-batch shape, FP32) trained for 20 steps on each backend ends with
# weights that agree to rounding. The per-element ZO math is bitwise
# (runtime/cuda/zo); the forward passes differ in the GEMMs' summation
# order, so the losses, hence g and the updates, differ in the last bits.
# Stated tolerances: every final weight within 1e-2 relative (relative to
# max(|a|, |b|, 1e-2), i.e. 1e-4 absolute for small weights), and the last
# step's loss within 1e-3. Models: opt-tiny and opt-125m (its real shape),
# and the tiny model of every other family (GPT-2, LLaMA, Qwen2, Qwen3), at
# lr 2e-4, except opt-125m at MeZO's 1e-6: from random weights at 2e-4 its
# steps move the loss by up to 1.5 and each step feeds the last one's
# rounding back into g, so the two runs part (on an H200: g agreed to
# 1.2e-5 at step 0, 2.6e-5 at step 2, 8e-4 at step 3, 4e-2 at step 12, 7e-2 at step 19)
# though every step computes the same function.
# Skips (passes, saying so) without a GPU.
set -uo pipefail
train=train/train
fail() { echo "FAIL: $*" >&2; exit 1; }
gpus=$(runtime/cuda/gpu_count 2>&1) || fail "runtime/cuda/gpu_count exited $?: $gpus"
[ "$gpus" != 0 ] || { echo "no GPU: skipped"; exit 0; }

failures=()
# model, batch, micro-batch, sequence, learning rate
for model in "opt-tiny 8 2 24 2e-4" "opt-125m 4 2 32 1e-6" "gpt2-tiny 8 2 24 2e-4" \
             "llama-tiny 8 2 24 2e-4" "qwen2-tiny 8 2 24 2e-4" "qwen3-tiny 8 2 24 2e-4"; do
  set -- $model
  common=(--model=$1 --strategy=mezo --batch=$2 --micro_batch=$3 --seq=$4 --steps=20
          --lr=$5 --seed=7 --eval_examples=16 --compute_dtype=FP32)
  for backend in cpu cuda; do
    out="$TEST_TMPDIR/$1_$backend"
    log=$(timeout 900 $train --backend=$backend --out_dir="$out" "${common[@]}" 2>&1) ||
      fail "$1 on $backend exited $?: $log"
  done
  cpu_loss=$(tail -1 "$TEST_TMPDIR/$1_cpu/train.csv" | cut -d, -f2)
  gpu_loss=$(tail -1 "$TEST_TMPDIR/$1_cuda/train.csv" | cut -d, -f2)
  echo "$1: last loss cpu $cpu_loss gpu $gpu_loss"
  diff=$(runtime/checkpoint/weights_diff "$TEST_TMPDIR/$1_cpu/weights.safetensors" \
    "$TEST_TMPDIR/$1_cuda/weights.safetensors" --max_rel=1e-2 --floor=1e-2)
  weights_ok=$?
  echo "$diff" | tail -1
  if [ "$weights_ok" -ne 0 ] ||
     ! awk -v a="$cpu_loss" -v b="$gpu_loss" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-3) }'; then
    failures+=("$1")
    # What a reader needs to find the cause: the tensors that differ most,
    # and each step's loss and projected gradient on both backends.
    echo "$1: the CPU and GPU runs differ beyond the tolerance; the tensors that differ most:"
    echo "$diff" | grep -v "^overall" | sort -k9 -g -r | head -8
    echo "step: loss and g on the CPU | on the GPU"
    paste -d'|' <(cut -d, -f1-3 "$TEST_TMPDIR/$1_cpu/train.csv") \
      <(cut -d, -f2-3 "$TEST_TMPDIR/$1_cuda/train.csv")
  fi
done
[ "${#failures[@]}" -eq 0 ] || fail "the CPU and GPU runs differ beyond the tolerance for: ${failures[*]}"
echo PASS
