#!/usr/bin/env bash
# zo_variants_study end to end, small: every weight with 1 and 4 directions
# a step, LoRA rank 4 and a prefix of 3 tokens, at 64 forward passes each
# (32, 8, 32 and 32 steps), writes one CSV row per step with the forwards
# counted 2q a step, a PNG, each run's trajectory log with its directions
# and the LoRA and prefix runs' PEFT adapters; bad flags are refused before
# anything runs.
set -uo pipefail
out="$TEST_TMPDIR/study"
fail() { echo "FAIL: $*" >&2; exit 1; }
study=experiments/zo_variants_study
log=$($study --programs_dir="$PWD" --out_dir="$out" --runs=q1,q4,lora_r4,prefix_k3 --forwards=64 \
      --window=16 2>&1) || fail "exit $?: $log"
csv="$out/zo_variants_study.csv"
[ "$(head -1 "$csv")" = "run,directions,peft,step,forwards,loss,loss_over_window" ] ||
  fail "header: $(head -1 "$csv")"
[ "$(grep -c '^q1,1,none,' "$csv")" -eq 32 ] || fail "q1: expected 32 steps"
[ "$(grep -c '^q4,4,none,' "$csv")" -eq 8 ] || fail "q4: expected 8 steps"
[ "$(grep -c '^lora_r4,1,lora r4,' "$csv")" -eq 32 ] || fail "lora_r4: expected 32 steps"
[ "$(grep -c '^prefix_k3,1,prefix k3,' "$csv")" -eq 32 ] || fail "prefix_k3: expected 32 steps"
grep -q '^q4,4,none,7,64,' "$csv" || fail "q4's last step is not at 64 forwards"
grep -q '^q1,1,none,31,64,' "$csv" || fail "q1's last step is not at 64 forwards"
head -c 4 "$out/zo_variants_study.png" | od -An -c | grep -q "P   N   G" || fail "no PNG"
head -1 "$out/q4/trajectory.log" | grep -q "directions=4$" || fail "q4 log header"
grep -q '"r": 4' "$out/lora_r4/adapter/adapter_config.json" || fail "no rank-4 PEFT adapters"
grep -q "^lora_r4 .*final: dev accuracy" <<<"$log" || fail "no evaluation for lora_r4: $log"
grep -q '"num_virtual_tokens": 3' "$out/prefix_k3/adapter/adapter_config.json" ||
  fail "no 3-token PEFT prefix"
bad=$($study --programs_dir="$PWD" --out_dir="$out/bad" --runs=q3 --forwards=64 2>&1)
[ $? -eq 2 ] && grep -q "not a multiple of 2q = 6" <<<"$bad" || fail "bad forwards: $bad"
bad=$($study --programs_dir="$PWD" --out_dir="$out/bad" --runs=lora8 --forwards=64 2>&1)
[ $? -eq 2 ] && grep -q "'lora8' is not a variant" <<<"$bad" || fail "bad run: $bad"
echo "$log"
echo PASS
