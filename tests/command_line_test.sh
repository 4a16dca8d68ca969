#!/usr/bin/env bash
# Every tool's command line as a hostile user meets it (base/command_line.h):
# --help lists every flag the program has (the lowering flags too) on
# stdout with exit 0; an unknown flag, a flag given twice, a bad value, a
# flag without its value, a stray argument and a lowering flag the strategy
# does not read each get one line on stderr naming the problem, exit 2,
# and nothing run; train's re-run of itself under mpirun passes the rule.
set -uo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
lower=schedule/lower
inspect=schedule/inspect
simulate=sim/simulate
train=train/train
model_info=models/model_info
weights_diff=runtime/checkpoint/weights_diff
tmp="$TEST_TMPDIR"

# help TOOL FLAG...: TOOL --help (and -h) prints its usage and FLAGs on
# stdout, nothing on stderr, and exits 0.
help() {
  local bin=$1; shift
  local name
  name=$(basename "$bin")
  for form in --help -h --helpfull; do
    out=$("$bin" $form 2>"$tmp/err"); code=$?
    [ "$code" -eq 0 ] || fail "$name $form exited $code"
    [ ! -s "$tmp/err" ] || fail "$name $form wrote to stderr: $(cat "$tmp/err")"
    grep -q "^usage: $name \[flags\]" <<<"$out" || fail "$name $form: no usage line in: $out"
    grep -q "^Exit status: 0 on success; 2 for bad usage or input" <<<"$out" ||
      fail "$name $form: no exit status rule"
    for flag in "$@"; do
      grep -q -- "^  $flag (" <<<"$out" || fail "$name $form does not list $flag: $out"
    done
  done
}
help $lower --strategy --pertp --bucket_mb --out
help $train --strategy --precision --ranks --steps
grep -q "^flags of schedule/lower_flags.cc:" <<<"$($train --help)" ||
  fail "train --help does not group the lowering flags"
help $inspect
grep -q "^usage: inspect \[flags\] SCHEDULE_FILE" <<<"$($inspect --help)" || fail "inspect usage"
help $simulate --schedule --trace_out
help $model_info --model --seq_len
help $weights_diff --max_rel --floor
# --help wins over anything else on the line, and starts nothing.
$train --bogus --ranks=1000 --help >/dev/null 2>&1 || fail "train --bogus --help exited $?"

# refused TOOL "message" ARGS...: exit 2, stdout empty, and on stderr one
# line, "TOOL: ...message...", with no Abseil noise.
refused() {
  local bin=$1 want=$2; shift 2
  local name
  name=$(basename "$bin")
  out=$(timeout 60 "$bin" "$@" 2>"$tmp/err"); code=$?
  err=$(cat "$tmp/err")
  [ "$code" -eq 2 ] || fail "$name $*: exit $code, want 2: $err"
  [ -z "$out" ] || fail "$name $*: wrote to stdout: $out"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$name $*: not one line: $err"
  grep -qF -- "$name: $want" <<<"$err" || fail "$name $*: no '$name: $want' in: $err"
}
# misused TOOL "message" ARGS...: refused by the command-line rule itself,
# which also points to --help.
misused() {
  refused "$@"
  grep -q -- "; see $(basename "$1") --help$" <<<"$err" || fail "$*: no 'see ... --help' in: $err"
}
# Unknown flags, with the nearest name when one is a typo away.
misused $lower "unknown flag --stratgy (did you mean --strategy?)" --stratgy=zo2
misused $train "unknown flag --step (did you mean --steps?)" --step=5
misused $simulate "unknown flag --bogus" --bogus
misused $inspect "unknown flag --bogus" --bogus "$tmp/s.pb"
misused $model_info "unknown flag --version" --version
misused $lower "--flagfile is not taken" --flagfile="$tmp/flags"
# A flag given twice.
misused $train "--steps given twice (5 and 7): give it once" --steps=5 --steps 7
misused $lower "--slicing given twice (true and false)" --slicing --noslicing
# A value that does not parse, and a flag without its value.
misused $train "--steps=abc is not a valid int32 (default" --steps=abc
misused $lower "--batch=1e99 is not a valid int32" --batch=1e99
misused $weights_diff "--max_rel=tight is not a valid number" --max_rel=tight a b
misused $lower "--slicing=maybe is not a valid bool" --slicing=maybe
misused $simulate "--schedule lacks its value" --schedule
misused $lower "--out lacks its value (--batch=8 after it is not one)" --out --batch=8
misused $train "--nosteps: --steps is not a bool flag" --nosteps
# Positional arguments: none for most tools, one for inspect, two for
# weights_diff.
misused $lower "unexpected argument 'stray': lower takes flags only" --out="$tmp/s.pb" stray
misused $train "unexpected argument 'false' after --slicing" --slicing false
misused $inspect "missing SCHEDULE_FILE (usage: inspect [flags] SCHEDULE_FILE)"
misused $inspect "unexpected argument 'b.pb'" a.pb b.pb
misused $weights_diff "missing B.safetensors" a.safetensors
misused $weights_diff "unexpected argument 'c'" a b c

# A lowering flag the strategy does not read, in lower and in train.
refused $lower "--precision=bf16 does not apply to --strategy=zo2: it applies to single_device, ddp, zero_1, zero_2 and zero_3 only; drop it" \
  --strategy=zo2 --precision=bf16 --out="$tmp/x.pb"
refused $lower "--recompute=true does not apply to --strategy=mezo" --strategy=mezo --recompute --out="$tmp/x.pb"
refused $lower "--flash_attention=true does not apply to --strategy=distzo2" \
  --strategy=distzo2 --flash_attention --out="$tmp/x.pb"
refused $lower "--block_slots=2 does not apply to --strategy=ddp: it applies to zo2 and distzo2 only" \
  --strategy=ddp --dp=2 --block_slots=2 --out="$tmp/x.pb"
refused $lower "--bucket_mb=50 does not apply to --strategy=zero_1: it applies to ddp only" \
  --strategy=zero_1 --dp=2 --bucket_mb=50 --out="$tmp/x.pb"
refused $lower "--wire_dtype=FP16 does not apply to --strategy=mezo" \
  --strategy=mezo --wire_dtype=FP16 --out="$tmp/x.pb"
refused $lower "--lr=0.01 does not apply to --strategy=ddp: it applies to mezo, zo2 and distzo2 only" \
  --strategy=ddp --dp=2 --lr=0.01 --out="$tmp/x.pb"
refused $lower "--slicing=false does not apply to --strategy=zo2 (the default): it applies to distzo2 only" \
  --slicing=false --out="$tmp/x.pb"
refused $train "--pertp=2 does not apply to --strategy=zo2: it applies to distzo2 only" \
  --strategy=zo2 --pertp=2 --out_dir="$tmp/never"
[ ! -e "$tmp/never" ] || fail "train started a run after refusing its flags"
# ... while the flags the strategy reads are taken.
$lower --strategy=ddp --dp=2 --batch=4 --bucket_mb=50 --precision=bf16 --recompute \
  --out="$tmp/ddp.pb" >/dev/null || fail "lower ddp with its own flags exited $?"
$lower --strategy=distzo2 --pertp=2 --slicing=false --block_slots=2 --wire_dtype=FP16 \
  --out="$tmp/s.pb" >/dev/null || fail "lower distzo2 with its own flags exited $?"
$inspect -- "$tmp/s.pb" >/dev/null || fail "inspect -- FILE exited $?"
refused $train "--precision=amp does not apply to" \
  --schedule="$tmp/s.pb" --strategy=distzo2 --precision=amp --out_dir="$tmp/never"

# train --ranks re-runs itself under mpirun with the same flags less
# --ranks (here in the "--ranks N" form): the ranks take them.
out=$(timeout 240 $train --ranks 2 --strategy=distzo2 --pertp=2 --steps=2 --batch=4 --seq=16 \
      --out_dir="$tmp/run" 2>&1) || fail "train --ranks 2 exited $?: $out"
grep -q "final weights checksum" <<<"$out" || fail "train --ranks 2: $out"
echo PASS
