#!/usr/bin/env bash
# A rank that dies (kill -9) or stalls (SIGSTOP) mid-run ends the whole job
# within the wait limit, with a message naming what it waited for, and
# leaves no rank process, shared-memory file or session directory behind.
set -uo pipefail
train="$PWD/train/train"
fail() { echo "FAIL: $*" >&2; exit 1; }
source "$PWD/tests/open_mpi_files.sh"

# fault SIGNAL: a 4-rank P2xD2 job (collectives and the per-step meeting)
# with a 10 s wait limit; once it trains, SIGNAL goes to its last rank.
fault() {
  local signal=$1 dir="$TEST_TMPDIR/$1"
  "$train" --strategy=distzo2 --pertp=2 --dp=2 --ranks=4 --batch=8 --steps=100000 --lr=1e-4 \
    --eval_examples=16 --collective_timeout_s=10 --out_dir="$dir" >"$dir.log" 2>&1 &
  local launcher=$!
  # Trained 3 steps: train.csv has its header and 3 rows.
  trained() { [ "$(cat "$dir/train.csv" 2>/dev/null | wc -l)" -ge 4 ]; }
  for _ in $(seq 1 1200); do
    trained && break
    sleep 0.1
  done
  trained || { kill -9 $launcher; fail "$signal: never started: $(cat "$dir.log")"; }
  local mpirun victim
  mpirun=$(pgrep -P "$launcher" | head -1)
  victim=$(pgrep -P "$mpirun" | tail -1)
  kill -"$signal" "$victim"
  local start; start=$(date +%s)
  timeout 60 tail --pid=$launcher -f /dev/null || { kill -9 $launcher; fail "$signal: the job still runs 60 s after the fault"; }
  wait $launcher; local code=$?
  local elapsed=$(($(date +%s) - start))
  [ "$code" -ne 0 ] || fail "$signal: the job exited 0"
  for _ in $(seq 1 100); do
    pgrep -f -- "--out_dir=$dir" >/dev/null || break
    sleep 0.1
  done
  if pgrep -f -- "--out_dir=$dir" >/dev/null; then
    pkill -9 -f -- "--out_dir=$dir"; fail "$signal: ranks left running"
  fi
  echo "$signal: exit $code ${elapsed}s after the fault: $(grep -o -m1 -e 'rank [0-9]*: .*did not.*' -e 'process rank.*exited on signal.*' "$dir.log")"
}
fault KILL
fault STOP
# The message names the wait that timed out, its op and step, and the
# stalled rank (the last one, 3).
grep -q -e "did not arrive within" -e "did not complete within" -e "did not finish within" "$TEST_TMPDIR/STOP.log" ||
  fail "STOP: no message naming the wait: $(tail -20 "$TEST_TMPDIR/STOP.log")"
grep -q -e "stalled or dead on this node: rank 3 (silent" -e "rank 3 did not arrive" "$TEST_TMPDIR/STOP.log" ||
  fail "STOP: the stalled rank 3 is not named: $(grep -m3 rank "$TEST_TMPDIR/STOP.log")"
[ "$(leftovers)" -eq 0 ] || fail "files left behind: $(find "$TEST_TMPDIR/shm" "$TMPDIR" -mindepth 1)"
echo PASS
