#!/usr/bin/env bash
# The training program's errors: clear messages, non-zero exits, no hang.
set -uo pipefail
train="$PWD/train/train"
fail() { echo "FAIL: $*" >&2; exit 1; }
# Error paths leave no shared-memory file or session directory behind.
export OMPI_MCA_btl_vader_backing_directory="$TEST_TMPDIR/shm" TMPDIR="$TEST_TMPDIR/tmp"
mkdir -p "$OMPI_MCA_btl_vader_backing_directory" "$TMPDIR"
# expect "message regex" args...: the command fails with exit status 2 (bad
# usage or input), saying so once, in its own words: none of Open MPI's
# notices (a block between lines of dashes, MPI_ABORT, ORTE_ERROR_LOG),
# unless the user started mpirun by hand.
expect() {
  local want="$1"; shift
  rm -rf "$TEST_TMPDIR/run"
  out=$(timeout 300 "$@" --out_dir="$TEST_TMPDIR/run" 2>&1); code=$?
  [ "$code" -ne 0 ] || fail "$* succeeded"
  [ "$code" -ne 124 ] || fail "$* hung"
  [ "$code" -eq 2 ] || fail "$*: exit $code, expected 2: $out"
  grep -q -- "$want" <<<"$out" || fail "$*: no '$want' in: $out"
  [ "$1" = mpirun ] || ! grep -q -E -e '^-{20,}' -e 'MPI_ABORT' -e 'ORTE_ERROR_LOG' \
    -e 'help message' <<<"$out" || fail "$*: Open MPI's notices reached the user: $out"
}
# The world size must match the schedule's devices, before any work.
expect "the schedule has 4 devices but 2 ranks are running" \
  mpirun -np 2 --oversubscribe "$train" --strategy=distzo2 --pertp=2 --dp=2
expect "expected mezo, zo2, distzo2" "$train" --strategy=zo3
# First-order baselines are simulated, never trained: from flags and from a
# lowered schedule file alike, before any rank starts.
expect "first-order baseline DDP.*train executes only mezo, zo2 and distzo2" \
  "$train" --strategy=ddp --dp=2
schedule/lower --strategy=fsdp_full_shard --dp=2 --batch=4 --seq=16 \
  --out="$TEST_TMPDIR/zero3.pbtxt" >/dev/null || fail "lowering a ZERO_3 schedule"
expect "schedule 'opt-tiny zero_3 x2 amp on local_cpu' in .*zero3.pbtxt is the first-order baseline ZERO_3.*//sim:simulate -- --schedule=" \
  "$train" --schedule="$TEST_TMPDIR/zero3.pbtxt"
expect "unknown model 'opt-7b'" "$train" --model=opt-7b
# A plan that does not fit a device's arena is refused before running.
expect "over by" "$train" --model=opt-13b --strategy=mezo --seq=32
# Models the runtime does not run (post-norm blocks), and a tokenizer/model
# mismatch.
expect "model 'opt-350m' is post-norm (norm_placement POST_NORM); the runtime runs pre-norm blocks" \
  "$train" --model=opt-350m --seq=32
sed 's/^vocab_size: .*/vocab_size: 300/; s/^name: .*/name: "opt-small-vocab"/' \
  models/zoo/opt-tiny.pbtxt >"$TEST_TMPDIR/small_vocab.pbtxt"
expect "do not belong together" "$train" --model="$TEST_TMPDIR/small_vocab.pbtxt"
# A refused run wrote nothing into --out_dir: running it again, fixed,
# needs no --overwrite.
[ -z "$(ls -A "$TEST_TMPDIR/run" 2>/dev/null)" ] ||
  fail "a refused run left files in --out_dir: $(ls -A "$TEST_TMPDIR/run")"
# Backends: a name that is none, and cuda in a build without it (or with no
# GPU), are refused before any rank starts, with exit 2.
expect "expected cpu or cuda" "$train" --backend=tpu
out=$(timeout 60 "$train" --backend=cuda --out_dir="$TEST_TMPDIR/run" 2>&1); code=$?
[ "$code" -eq 2 ] || fail "--backend=cuda without a GPU exited $code: $out"
grep -q -e "--config=cuda" -e "no CUDA GPU is visible" <<<"$out" || fail "--backend=cuda: $out"
expect "applies to --backend=cuda only" "$train" --tf32
# A device computes on 1 to 256 cores.
expect "threads=0: expected 1 to 256 (cores per device)" "$train" --threads=0
expect "speed_probe_every=-1: expected 0 to 1000000000" "$train" --speed_probe_every=-1
# Waits need a deadline: 0, negative or not a number is a flag error.
expect "collective_timeout_s=0: expected 1 to 86400" "$train" --collective_timeout_s=0
expect "collective_timeout_s=-1: expected 1 to 86400" "$train" --collective_timeout_s=-1
expect "expected a number of seconds" "$train" --collective_timeout_s=soon
# A rank count other than the schedule's is refused before mpirun starts
# (no thousand processes on a laptop), as is one past the limit.
expect "has 1 devices but --ranks=1000" "$train" --ranks=1000
expect "ranks=100000: expected 0 to 4096" "$train" --ranks=100000
pgrep -f -- "--out_dir=$TEST_TMPDIR/run" >/dev/null && fail "ranks were started"
expect "--resume continues the run in --out_dir and --overwrite replaces it" \
  "$train" --resume --overwrite
# --final_outputs=false: the logs and the timeline, no weights.
timeout 120 "$train" --steps=3 --final_outputs=false --out_dir="$TEST_TMPDIR/lean" >/dev/null 2>&1 ||
  fail "--final_outputs=false failed"
[ -s "$TEST_TMPDIR/lean/timeline.pb" ] && [ -s "$TEST_TMPDIR/lean/train.csv" ] ||
  fail "--final_outputs=false wrote no timeline or log"
[ ! -e "$TEST_TMPDIR/lean/weights.safetensors" ] || fail "--final_outputs=false saved weights"
# (A single rank's helper daemon removes its session directory just after
# the rank exits: allow it 10 s.)
for _ in $(seq 1 100); do
  left=$(find "$TEST_TMPDIR/shm" "$TMPDIR" -mindepth 1)
  [ -z "$left" ] && break
  sleep 0.1
done
[ -z "$left" ] || fail "files left behind by failed runs: $left"
echo PASS
