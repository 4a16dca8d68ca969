#!/usr/bin/env bash
# A rank killed mid-run makes the others exit non-zero within a bounded time
# instead of hanging in a collective.
set -uo pipefail
train="$PWD/runtime/train"
fail() { echo "FAIL: $*" >&2; exit 1; }

mpirun -np 3 --oversubscribe "$train" --strategy=distzo2 --pertp=1 --dp=3 --batch=6 \
  --steps=100000 --lr=1e-4 --eval_examples=16 --collective_timeout_s=20 \
  --out_dir="$TEST_TMPDIR/run" >"$TEST_TMPDIR/log" 2>&1 &
launcher=$!
# Wait until the ranks are training, then kill one of them.
for _ in $(seq 1 1200); do
  grep -q "step 2/" "$TEST_TMPDIR/log" 2>/dev/null && break
  sleep 0.1
done
grep -q "step 2/" "$TEST_TMPDIR/log" || { kill -9 $launcher; fail "never started: $(cat "$TEST_TMPDIR/log")"; }
victim=$(pgrep -f -n -- "--dp=3 --batch=6 --steps=100000") || fail "no rank to kill"
kill -9 "$victim"
start=$(date +%s)
timeout 60 tail --pid=$launcher -f /dev/null || { kill -9 $launcher; fail "the job still runs 60 s after a rank died"; }
wait $launcher; code=$?
elapsed=$(($(date +%s) - start))
[ "$code" -ne 0 ] || fail "the job exited 0 after a rank was killed"
if pgrep -f -- "--dp=3 --batch=6 --steps=100000" >/dev/null; then
  pkill -9 -f -- "--dp=3 --batch=6 --steps=100000"; fail "ranks left running"
fi
echo "PASS: exit $code ${elapsed}s after the kill"
