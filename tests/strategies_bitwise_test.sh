#!/usr/bin/env bash
# The determinism contract end to end: the same seeds, data and micro-batch
# shape give bitwise-identical final weights (the same checksum) after 50
# steps under every strategy: mezo and zo2 on 1 rank; distzo2 P=2xD=1,
# P=1xD=2 and P=2xD=2 on 2 and 4 real MPI ranks, each sliced and naive;
# and on the CPU testbed, devices computing on several cores (--threads:
# mezo on 2, zo2 on 3, distzo2 P=2xD=1 on 2 per rank). For the tiny model
# of every family the runtime trains (OPT, GPT-2, LLaMA, Qwen2, Qwen3): one
# checksum per family, printed as "MODEL: CHECKSUM". Then, for the first
# model, n-SPSA with 4 and with 3 directions a step, under every grid whose
# P divides 2q on up to 4 ranks: one checksum each. Last, LoRA ZO and
# prefix tuning (adapters or a prefix trained over a frozen base, with one
# and with 2 directions) on OPT and LLaMA: one checksum per model and
# variant under every grid.
# `--models=a,b` checks those models only (a GPU session splits the check
# over calls); other arguments are passed to every run: `--backend=cuda`
# runs the same check on the GPU (ranks sharing it), and skips, saying so,
# without a GPU.
set -uo pipefail
train=train/train
fail() { echo "FAIL: $*" >&2; exit 1; }
models=(opt-tiny gpt2-tiny llama-tiny qwen2-tiny qwen3-tiny)
extra=()
for arg in "$@"; do
  case "$arg" in
    --models=*) IFS=, read -r -a models <<<"${arg#--models=}" ;;
    *) extra+=("$arg") ;;
  esac
done
configs=("mezo 1 1 true" "zo2 1 1 true"
         "distzo2 2 1 true" "distzo2 2 1 false"
         "distzo2 1 2 true" "distzo2 1 2 false"
         "distzo2 2 2 true" "distzo2 2 2 false")
if [[ " ${extra[*]} " == *" --backend=cuda "* ]]; then
  gpus=$(runtime/cuda/gpu_count 2>&1) || fail "runtime/cuda/gpu_count exited $?: $gpus"
  [ "$gpus" != 0 ] || { echo "no GPU: skipped"; exit 0; }
else
  configs+=("mezo 1 1 true 2" "zo2 1 1 true 3" "distzo2 2 1 true 2")
fi

common=(--batch=8 --micro_batch=2 --seq=24 --steps=50 --lr=2e-4 --seed=7
        --eval_examples=64 --collective_timeout_s=60)
checksums=()
for model in "${models[@]}"; do
  reference=""
  for cfg in "${configs[@]}"; do
    set -- $cfg
    ranks=$(($2 * $3))
    threads=${5:-1}
    out="$TEST_TMPDIR/$model/$1_P$2_D$3_$4_threads$threads"
    threads_flag=()
    [ "$threads" -gt 1 ] && threads_flag=(--threads="$threads")
    grid=()  # the grid flags apply to distzo2 alone
    [ "$1" = distzo2 ] && grid=(--pertp=$2 --dp=$3 --slicing=$4)
    # A deadline against a hang only: a run took up to minutes on a loaded machine.
    log=$(timeout 600 $train --model=$model --strategy=$1 "${grid[@]}" --ranks=$ranks \
          "${threads_flag[@]}" --out_dir="$out" "${common[@]}" "${extra[@]}" 2>&1) ||
      fail "$model $cfg exited $?: $log"
    sum=$(sed -n 's/^final weights checksum: //p' <<<"$log")
    [ -n "$sum" ] || fail "$model $cfg printed no checksum: $log"
    echo "$model $cfg ($ranks ranks): $sum"
    [ -z "$reference" ] && reference=$sum
    [ "$sum" = "$reference" ] || fail "$model $cfg: checksum $sum differs from mezo's $reference"
    [ "$(wc -l <"$out/trajectory.log")" -eq 51 ] || fail "$model $cfg: trajectory.log lacks steps"
  done
  # The trajectories agree too, line by line (seed, g, lr of every step).
  for log in "$TEST_TMPDIR/$model"/*/trajectory.log; do
    cmp -s "$log" "$TEST_TMPDIR/$model/mezo_P1_D1_true_threads1/trajectory.log" ||
      fail "$log differs"
  done
  checksums+=("$model: $reference")
done
printf '%s\n' "${checksums[@]}"
# Each family trained something of its own.
[ "$(printf '%s\n' "${checksums[@]}" | cut -d' ' -f2 | sort -u | wc -l)" -eq "${#models[@]}" ] ||
  fail "two families ended with the same checksum"

# n-SPSA: q directions a step give one checksum under every strategy too,
# perturbation parallelism splitting the 2q passes any way P divides them
# (q = 4: P = 1, 2, 4; q = 3: P = 3), and one trajectory.log (format v2).
for q_configs in "4|mezo 1 1 true|zo2 1 1 true|distzo2 2 1 true|distzo2 2 1 false|distzo2 4 1 true|distzo2 4 1 false|distzo2 1 2 true|distzo2 2 2 true" \
                 "3|mezo 1 1 true|distzo2 3 1 true|distzo2 3 1 false"; do
  IFS='|' read -r -a q_cfg <<<"$q_configs"
  q=${q_cfg[0]}
  model=${models[0]}
  reference=""
  for cfg in "${q_cfg[@]:1}"; do
    set -- $cfg
    ranks=$(($2 * $3))
    out="$TEST_TMPDIR/q$q/$model/$1_P$2_D$3_$4"
    grid=()
    [ "$1" = distzo2 ] && grid=(--pertp=$2 --dp=$3 --slicing=$4)
    log=$(timeout 600 $train --model=$model --strategy=$1 "${grid[@]}" --ranks=$ranks \
          --directions=$q --out_dir="$out" "${common[@]}" "${extra[@]}" 2>&1) ||
      fail "$model q=$q $cfg exited $?: $log"
    sum=$(sed -n 's/^final weights checksum: //p' <<<"$log")
    [ -n "$sum" ] || fail "$model q=$q $cfg printed no checksum: $log"
    echo "$model q=$q $cfg ($ranks ranks): $sum"
    [ -z "$reference" ] && reference=$sum
    [ "$sum" = "$reference" ] || fail "$model q=$q $cfg: checksum $sum differs from mezo's $reference"
    head -1 "$out/trajectory.log" | grep -q "^# zosched trajectory v2 base_seed=7 directions=$q$" ||
      fail "$model q=$q $cfg: trajectory.log header: $(head -1 "$out/trajectory.log")"
    cmp -s "$out/trajectory.log" "$TEST_TMPDIR/q$q/$model/mezo_P1_D1_true/trajectory.log" ||
      fail "$model q=$q $cfg: trajectory.log differs from mezo's"
  done
  for one in "${checksums[@]}"; do
    [ "$one" != "$model: $reference" ] || fail "q=$q ended where one direction did: $reference"
  done
  echo "$model, $q directions: $reference"
done
# LoRA and prefix tuning: only the adapters (or the prefix) are perturbed
# and updated, resident on every device, the base uploaded and never
# offloaded; every grid, and q = 2 with P splitting its 4 passes, trains
# them to one checksum.
peft_runs=("opt-tiny lora --peft=lora --lora_rank=4 --lora_alpha=8 --lora_targets=query,value,up"
           "llama-tiny lora --peft=lora --lora_rank=4 --lora_alpha=8 --lora_targets=query,value,gate,down"
           "opt-tiny prefix --peft=prefix --prefix_tokens=3"
           "llama-tiny prefix --peft=prefix --prefix_tokens=3")
for run in "${peft_runs[@]}"; do
  set -- $run
  model=$1
  kind=$2
  shift 2
  peft=("$@")
  for q in 1 2; do
    reference=""
    peft_configs=("mezo 1 1 true" "zo2 1 1 true" "distzo2 2 1 true" "distzo2 2 1 false"
                  "distzo2 1 2 true" "distzo2 2 2 true" "distzo2 2 2 false")
    [ "$q" = 2 ] && peft_configs=("mezo 1 1 true" "distzo2 4 1 true" "distzo2 2 2 false")
    for cfg in "${peft_configs[@]}"; do
      set -- $cfg
      ranks=$(($2 * $3))
      out="$TEST_TMPDIR/${kind}_q$q/$model/$1_P$2_D$3_$4"
      grid=()
      [ "$1" = distzo2 ] && grid=(--pertp=$2 --dp=$3 --slicing=$4)
      log=$(timeout 600 $train --model=$model --strategy=$1 "${grid[@]}" --ranks=$ranks \
            --directions=$q "${peft[@]}" --out_dir="$out" "${common[@]}" "${extra[@]}" 2>&1) ||
        fail "$model $kind q=$q $cfg exited $?: $log"
      sum=$(sed -n 's/^final weights checksum: //p' <<<"$log")
      [ -n "$sum" ] || fail "$model $kind q=$q $cfg printed no checksum: $log"
      echo "$model $kind q=$q $cfg ($ranks ranks): $sum"
      [ -z "$reference" ] && reference=$sum
      [ "$sum" = "$reference" ] ||
        fail "$model $kind q=$q $cfg: checksum $sum differs from mezo's $reference"
    done
    for one in "${checksums[@]}"; do
      [ "$one" != "$model: $reference" ] || fail "$kind ended where full ZO did: $reference"
    done
    echo "$model, $kind, $q direction(s): $reference"
  done
done
echo PASS
