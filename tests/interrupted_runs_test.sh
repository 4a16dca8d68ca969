#!/usr/bin/env bash
# Interrupted runs resume to the uninterrupted run's weights, bit for bit,
# and leave nothing behind. For several seeds, a 2-rank run (FP16 host
# store, so storage dtypes matter) is interrupted at a random point by one
# of: Ctrl-C or SIGTERM to the launcher, kill -9 of a rank, kill -9 of the
# launcher; the resumed run is interrupted again the same way; a third
# --resume runs to the end. Once, a checkpoint cut short (a stray .tmp) and a
# log line cut short are left for the resume to cope with. Every run's
# processes must be gone within 30 s, and no shared-memory or session file
# may remain.
set -uo pipefail
train="$PWD/runtime/train"
fail() { echo "FAIL: $*" >&2; exit 1; }
# Open MPI's shared-memory files and session directories go where we count them.
export OMPI_MCA_btl_vader_backing_directory="$TEST_TMPDIR/shm" TMPDIR="$TEST_TMPDIR/tmp"
mkdir -p "$OMPI_MCA_btl_vader_backing_directory" "$TMPDIR"
leftovers() { find "$OMPI_MCA_btl_vader_backing_directory" "$TMPDIR" -mindepth 1 | wc -l; }

common=(--strategy=distzo2 --pertp=2 --dp=1 --ranks=2 --steps=400 --checkpoint_every=50
        --batch=4 --seq=24 --lr=2e-4 --host_dtype=FP16 --seed=5 --eval_examples=16)
full=$(timeout 300 "$train" "${common[@]}" --out_dir="$TEST_TMPDIR/full" 2>&1) || fail "full run: $full"
want=$(sed -n 's/^final weights checksum: //p' <<<"$full")
[ -n "$want" ] || fail "no checksum: $full"
[ "$(leftovers)" -eq 0 ] || fail "a finished run left files: $(find "$TEST_TMPDIR/shm" "$TMPDIR")"

# last_step DIR: the last step the run's trajectory log holds (0 if none).
last_step() { tail -1 "$1/trajectory.log" 2>/dev/null | cut -d' ' -f1 | grep -E '^[0-9]+$' || echo 0; }

# interrupt MODE DIR [--resume]: starts the run, waits until it has logged a
# random number of steps past where it started (steps, not seconds, so that a
# loaded machine moves the moment but not the test's meaning), interrupts it
# with MODE and waits until all its processes are gone.
interrupt() {
  local mode=$1 dir=$2; shift 2
  local target=$(($(last_step "$dir") + 3 + RANDOM % 120))
  "$train" "${common[@]}" --out_dir="$dir" "$@" >"$dir.log" 2>&1 &
  local launcher=$!
  while [ "$(last_step "$dir")" -lt "$target" ]; do
    kill -0 "$launcher" 2>/dev/null || fail "$mode: the run ended before step $target: $(tail -5 "$dir.log")"
    sleep 0.02
  done
  local mpirun ranks
  mpirun=$(pgrep -P "$launcher" | head -1)
  ranks=$(pgrep -P "${mpirun:-0}" | tr '\n' ' ')
  case $mode in
    int) kill -INT "$launcher" ;;
    term) kill -TERM "$launcher" ;;
    kill_rank) kill -9 $(awk '{print $NF}' <<<"$ranks") ;;
    kill_launcher) kill -9 "$launcher" ;;
  esac
  wait "$launcher"; local code=$?
  for _ in $(seq 1 300); do
    pgrep -f -- "--out_dir=$dir" >/dev/null || break
    sleep 0.1
  done
  if pgrep -f -- "--out_dir=$dir" >/dev/null; then
    pkill -9 -f -- "--out_dir=$dir"; fail "$mode: processes left 30 s after the interruption"
  fi
  echo "  $mode after step $(tail -1 "$dir/trajectory.log" 2>/dev/null | cut -d' ' -f1) (exit $code)"
  [ "$code" -ne 0 ] || fail "$mode: the run ended before it was interrupted; make it longer"
  case $mode in
    int) [ "$code" -eq 130 ] || fail "Ctrl-C: exit $code, expected 130: $(tail -5 "$dir.log")" ;;
    term) [ "$code" -eq 143 ] || fail "SIGTERM: exit $code, expected 143: $(tail -5 "$dir.log")" ;;
  esac
}

# Every mode, first and second; the seed picks the moments.
plans=("int kill_rank" "kill_launcher term" "kill_rank int")
for seed in 1 2 3; do
  RANDOM=$seed
  dir="$TEST_TMPDIR/run$seed"
  read -r first second <<<"${plans[$((seed - 1))]}"
  echo "seed $seed: $first, then $second"
  interrupt "$first" "$dir"
  interrupt "$second" "$dir" --resume
  if [ "$seed" -eq 1 ]; then
    printf 'garbage' >"$dir/checkpoint.safetensors.tmp"
    printf '999 123' >>"$dir/trajectory.log"
  fi
  out=$(timeout 300 "$train" "${common[@]}" --out_dir="$dir" --resume 2>&1) || fail "seed $seed: resume: $out"
  got=$(sed -n 's/^final weights checksum: //p' <<<"$out")
  [ "$got" = "$want" ] || fail "seed $seed: resumed checksum '$got' != uninterrupted '$want'"
  cmp -s "$TEST_TMPDIR/full/trajectory.log" "$dir/trajectory.log" ||
    fail "seed $seed: trajectory logs differ"
  grep -q "resuming at step" <<<"$out" || fail "seed $seed: $out"
done
[ "$(leftovers)" -eq 0 ] || fail "files left behind: $(find "$TEST_TMPDIR/shm" "$TMPDIR" -mindepth 1)"
echo "PASS: $want"
