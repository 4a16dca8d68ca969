#!/usr/bin/env bash
# Interrupted runs resume to the uninterrupted run's weights, bit for bit,
# and leave nothing behind. For several seeds, a 2-rank run (FP16 host
# store, so storage dtypes matter) is interrupted at a random step by one
# of: Ctrl-C or SIGTERM to the launcher, kill -9 of a rank, kill -9 of the
# launcher, kill -9 of mpirun; the resumed run is interrupted again the same
# way; a third --resume runs to the end. Once, a checkpoint cut short (a
# stray .tmp) and a log line cut short are left for the resume to cope with.
#
# The same on any machine: the emulated host links are throttled so that a
# step takes at least ~10 ms however fast the cores are (the step count a
# wait or a signal spans stays small beside the run's 400 steps), the
# interruption points are steps (not seconds), and each is drawn from the
# steps the run still has ahead. What each interruption must do:
#   Ctrl-C, SIGTERM   the ranks stop after the step in flight, checkpoint,
#                     exit 130 / 143
#   kill -9 launcher  the same stop (mpirun gets SIGUSR1 as the launcher
#                     dies): a checkpoint at the last logged step
#   kill -9 rank      mpirun ends the others; the launcher names the rank
#   kill -9 mpirun    the ranks go with it; the launcher says so, exits 1
# Every run's processes must be gone afterwards, and no shared-memory or
# session file may remain; a killed job's output is the ranks' and the
# launcher's own lines, none of Open MPI's notices.
set -uo pipefail
train="$PWD/train/train"
fail() { echo "FAIL: $*" >&2; exit 1; }
source "$PWD/tests/open_mpi_files.sh"

steps=400
common=(--strategy=distzo2 --pertp=2 --dp=1 --ranks=2 --steps=$steps --checkpoint_every=50
        --batch=4 --seq=24 --lr=2e-4 --host_dtype=FP16 --seed=5 --eval_examples=16
        --h2d_gbps=0.02 --d2h_gbps=0.02)
full=$(timeout 600 "$train" "${common[@]}" --out_dir="$TEST_TMPDIR/full" 2>&1) || fail "full run: $full"
want=$(sed -n 's/^final weights checksum: //p' <<<"$full")
[ -n "$want" ] || fail "no checksum: $full"
[ "$(leftovers)" -eq 0 ] || fail "a finished run left files: $(find "$TEST_TMPDIR/shm" "$TMPDIR")"

# last_step DIR: the last step the run's trajectory log holds (-1 if none).
last_step() { tail -1 "$1/trajectory.log" 2>/dev/null | cut -d' ' -f1 | grep -E '^[0-9]+$' || echo -1; }
# checkpoint_step DIR: the step the run's checkpoint includes (its metadata).
checkpoint_step() { head -c 4096 "$1/checkpoint.safetensors" | grep -ao '"zosched.step":"-\?[0-9]*"' | grep -o -- '-\?[0-9]*'; }

# interrupt MODE DIR [--resume]: starts the run, waits until it has logged a
# random number of steps (a third of those left at most) past where it
# started, interrupts it with MODE and waits until all its processes are gone.
interrupt() {
  local mode=$1 dir=$2; shift 2
  local from; from=$(last_step "$dir")
  local target=$((from + 3 + RANDOM % ((steps - from) / 3)))
  "$train" "${common[@]}" --out_dir="$dir" "$@" >"$dir.log" 2>&1 &
  local launcher=$!
  while [ "$(last_step "$dir")" -lt "$target" ]; do
    kill -0 "$launcher" 2>/dev/null || fail "$mode: the run ended before step $target: $(tail -5 "$dir.log")"
    sleep 0.02
  done
  local mpirun ranks at_kill
  mpirun=$(pgrep -P "$launcher" | head -1)
  ranks=$(pgrep -P "${mpirun:-0}" | tr '\n' ' ')
  at_kill=$(last_step "$dir")
  case $mode in
    int) kill -INT "$launcher" ;;
    term) kill -TERM "$launcher" ;;
    kill_rank) kill -9 $(awk '{print $NF}' <<<"$ranks") ;;
    kill_launcher) kill -9 "$launcher" ;;
    kill_mpirun) kill -9 "$mpirun" ;;
  esac
  wait "$launcher"; local code=$?
  # However the job ends, its processes go: within a minute on any machine.
  for _ in $(seq 1 600); do
    pgrep -f -- "--out_dir=$dir" >/dev/null || break
    sleep 0.1
  done
  if pgrep -f -- "--out_dir=$dir" >/dev/null; then
    pkill -9 -f -- "--out_dir=$dir"; fail "$mode: processes left a minute after the interruption"
  fi
  local last; last=$(last_step "$dir")
  echo "  $mode at step $at_kill, last step logged $last (exit $code)"
  [ "$last" -lt $((steps - 1)) ] || fail "$mode: the run ended before it was interrupted"
  case $mode in
    int) [ "$code" -eq 130 ] || fail "Ctrl-C: exit $code, expected 130: $(tail -5 "$dir.log")" ;;
    term) [ "$code" -eq 143 ] || fail "SIGTERM: exit $code, expected 143: $(tail -5 "$dir.log")" ;;
    kill_launcher)
      # The ranks stopped as on Ctrl-C: after the step in flight, with a
      # checkpoint of it (a few steps of >= 10 ms past the kill here; 40
      # leaves room for mpirun waiting for a core, not for seconds of
      # training on).
      grep -q "stopped by SIGUSR1 after step $last, checkpoint written" "$dir.log" ||
        fail "kill -9 of the launcher: the ranks did not stop cleanly: $(tail -3 "$dir.log")"
      [ "$(checkpoint_step "$dir")" = "$last" ] ||
        fail "kill -9 of the launcher: checkpoint of step $(checkpoint_step "$dir"), last step $last"
      [ $((last - at_kill)) -le 40 ] ||
        fail "kill -9 of the launcher: the ranks ran on from step $at_kill to $last" ;;
    kill_rank)
      grep -q "train: rank [01] (node [^)]*) was killed by signal 9 (SIGKILL); mpirun ended the other ranks" "$dir.log" ||
        fail "kill -9 of a rank: not named: $(tail -5 "$dir.log")" ;;
    kill_mpirun)
      [ "$code" -eq 1 ] || fail "kill -9 of mpirun: exit $code, expected 1"
      grep -q "train: mpirun was killed by signal 9 (KILL); its ranks went with it" "$dir.log" ||
        fail "kill -9 of mpirun: not said: $(tail -5 "$dir.log")" ;;
  esac
  # None of Open MPI's notices: the ranks' and the launcher's lines only.
  if grep -E -e '^-{20,}' -e 'MPI_ABORT' -e 'ORTE_ERROR_LOG' -e 'help message' "$dir.log"; then
    fail "$mode: Open MPI's notices reached the user"
  fi
  [ "$(leftovers)" -eq 0 ] || fail "$mode: files left behind: $(find "$TEST_TMPDIR/shm" "$TMPDIR" -mindepth 1)"
}

# Every mode, first and second; the seed picks the moments.
plans=("int kill_rank" "kill_launcher term" "kill_rank int" "kill_mpirun kill_launcher")
for seed in 1 2 3 4; do
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
  out=$(timeout 600 "$train" "${common[@]}" --out_dir="$dir" --resume 2>&1) || fail "seed $seed: resume: $out"
  got=$(sed -n 's/^final weights checksum: //p' <<<"$out")
  [ "$got" = "$want" ] || fail "seed $seed: resumed checksum '$got' != uninterrupted '$want'"
  cmp -s "$TEST_TMPDIR/full/trajectory.log" "$dir/trajectory.log" ||
    fail "seed $seed: trajectory logs differ"
  grep -q "resuming at step" <<<"$out" || fail "seed $seed: $out"
done
[ "$(leftovers)" -eq 0 ] || fail "files left behind: $(find "$TEST_TMPDIR/shm" "$TMPDIR" -mindepth 1)"
echo "PASS: $want"
