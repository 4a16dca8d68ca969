#!/usr/bin/env bash
# A LoRA or prefix run's outputs as a user takes them to PEFT: OUT_DIR/adapter
# holds adapter_config.json and adapter_model.safetensors (no
# weights.safetensors: the base is what the run started from); a run
# started from them (--init_adapters) with η = 0 ends with the same
# adapters, bit for bit; adapters of another shape, or LoRA or prefix flags
# without their --peft, are refused with what would be right.
set -uo pipefail
train=train/train
fail() { echo "FAIL: $*" >&2; exit 1; }
lora=(--model=llama-tiny --strategy=distzo2 --pertp=2 --ranks=2 --batch=4 --seq=16 --seed=5
      --eval_examples=32 --peft=lora --lora_rank=4 --lora_alpha=8 --lora_targets=query,value,gate)

log=$($train "${lora[@]}" --steps=12 --lr=1e-2 --out_dir="$TEST_TMPDIR/first" 2>&1) ||
  fail "first run: $log"
dir="$TEST_TMPDIR/first/adapter"
[ -s "$dir/adapter_model.safetensors" ] || fail "no adapter_model.safetensors: $(ls "$dir")"
[ ! -e "$TEST_TMPDIR/first/weights.safetensors" ] || fail "a LoRA run wrote weights.safetensors"
config=$(tr -d ' \n' <"$dir/adapter_config.json")
for want in '"peft_type":"LORA"' '"r":4' '"lora_alpha":8' \
            '"target_modules":["gate_proj","q_proj","v_proj"]'; do
  grep -qF "$want" <<<"$config" || fail "adapter_config.json lacks $want: $config"
done
# PEFT's tensor names, A [r, in] and B [out, r].
grep -qa 'base_model.model.model.layers.3.mlp.gate_proj.lora_B.weight' \
  "$dir/adapter_model.safetensors" || fail "no gate_proj lora_B of block 3 in the file"

log=$($train "${lora[@]}" --steps=3 --lr=0 --init_adapters="$dir" \
      --out_dir="$TEST_TMPDIR/again" 2>&1) || fail "run from the adapters: $log"
cmp -s "$dir/adapter_model.safetensors" "$TEST_TMPDIR/again/adapter/adapter_model.safetensors" ||
  fail "adapters started from and kept at η = 0 changed"

refused() {  # refused EXPECTED FLAGS...: exit 2, the message containing EXPECTED
  local expected=$1
  shift
  local out code
  out=$($train "$@" --steps=2 --out_dir="$TEST_TMPDIR/refused" --overwrite 2>&1)
  code=$?
  [ "$code" -eq 2 ] && grep -qF -- "$expected" <<<"$out" ||
    fail "$* exited $code, expected 2 and '$expected': $out"
}
refused "holds rank 4, alpha 8 LoRA adapters on 3 projection(s); the run trains rank 8" \
  "${lora[@]/--lora_rank=4/--lora_rank=8}" --init_adapters="$dir"
refused "the schedule 'llama-tiny distzo2 P2xD1 sliced on local_cpu' trains every parameter" \
  --model=llama-tiny --strategy=distzo2 --pertp=2 --ranks=2 --init_adapters="$dir"
refused "--lora_rank=4 applies with --peft=lora only" --model=opt-tiny --lora_rank=4
refused "--peft=lora2: expected none, lora or prefix" --model=opt-tiny --peft=lora2
refused "fuses its query, key and value projections" --model=gpt2-tiny --peft=lora
refused "model 'opt-tiny' has no gated FFN" --model=opt-tiny --peft=lora --lora_targets=gate
refused "--lora_targets names 'attention'" --model=opt-tiny --peft=lora --lora_targets=attention

# A prefix: PEFT's prefix tuning, one prompt_embeddings [k, layers · 2 · kv]
# (llama-tiny: 4 layers, keys and values 32 wide).
prefix=(--model=llama-tiny --strategy=distzo2 --pertp=2 --ranks=2 --batch=4 --seq=16 --seed=5
        --eval_examples=32 --peft=prefix --prefix_tokens=6)
log=$($train "${prefix[@]}" --steps=12 --lr=1e-2 --out_dir="$TEST_TMPDIR/prefix" 2>&1) ||
  fail "prefix run: $log"
dir="$TEST_TMPDIR/prefix/adapter"
config=$(tr -d ' \n' <"$dir/adapter_config.json")
for want in '"peft_type":"PREFIX_TUNING"' '"num_virtual_tokens":6' '"num_layers":4' \
            '"token_dim":32' '"prefix_projection":false'; do
  grep -qF "$want" <<<"$config" || fail "prefix adapter_config.json lacks $want: $config"
done
header=$(head -c 200 "$dir/adapter_model.safetensors" | tr -d '\0' | tr -cd '[:print:]')
grep -qF '"prompt_embeddings":{' <<<"$header" && grep -qF '"shape":[6,256]' <<<"$header" ||
  fail "no prompt_embeddings [6, 256] in $header"
log=$($train "${prefix[@]}" --steps=3 --lr=0 --init_adapters="$dir" \
      --out_dir="$TEST_TMPDIR/prefix_again" 2>&1) || fail "run from the prefix: $log"
cmp -s "$dir/adapter_model.safetensors" \
  "$TEST_TMPDIR/prefix_again/adapter/adapter_model.safetensors" ||
  fail "a prefix started from and kept at η = 0 changed"
refused "holds a prefix of 6 virtual tokens; the run trains a prefix of 5" \
  "${prefix[@]/--prefix_tokens=6/--prefix_tokens=5}" --init_adapters="$dir"
refused "--prefix_tokens=4 applies with --peft=prefix only" --model=opt-tiny --prefix_tokens=4
refused "reaches position 68, past model 'opt-tiny''s 64 positions" \
  --model=opt-tiny --peft=prefix --prefix_tokens=4 --seq=64
echo PASS
