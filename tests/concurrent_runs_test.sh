#!/usr/bin/env bash
# Two runs never write one output directory at once: while a run trains
# in --out_dir, another run into it is refused at once (a fresh run with
# --overwrite, a --resume, a run of one rank, the ranks of a hand-started
# mpirun), with exit status 2 and a message naming the directory, and the
# first run carries on untouched. Once it has stopped, --resume continues it.
set -uo pipefail
train="$PWD/train/train"
fail() { echo "FAIL: $*" >&2; exit 1; }
# The hand-started mpirun's files in this test's own directories (train's
# launcher gives its ranks their own anyway).
export TMPDIR="$TEST_TMPDIR/tmp" OMPI_MCA_btl_vader_backing_directory="$TEST_TMPDIR/shm"
mkdir -p "$TMPDIR" "$OMPI_MCA_btl_vader_backing_directory"
dir="$TEST_TMPDIR/run"
# Throttled links: a step takes at least ~10 ms on any machine, so the run
# is still training while the others are tried.
common=(--strategy=distzo2 --pertp=2 --dp=1 --batch=4 --seq=24 --eval_examples=16
        --h2d_gbps=0.02 --d2h_gbps=0.02)
"$train" "${common[@]}" --ranks=2 --steps=1000000 --out_dir="$dir" >"$dir.log" 2>&1 &
launcher=$!
trained() { [ "$(cat "$dir/train.csv" 2>/dev/null | wc -l)" -ge 3 ]; }
for _ in $(seq 1 3000); do  # up to 5 minutes to start on a slow machine
  trained && break
  kill -0 $launcher 2>/dev/null || fail "the first run ended: $(tail -5 "$dir.log")"
  sleep 0.1
done
trained || { kill -9 $launcher; fail "the first run never trained: $(tail -5 "$dir.log")"; }

refused() {  # refused WHAT args...: the run is refused, naming the directory
  local what=$1; shift
  out=$(timeout 300 "$@" 2>&1); code=$?
  [ "$code" -eq 2 ] || { kill -9 $launcher; fail "$what: exit $code, expected 2: $out"; }
  grep -q "$dir (--out_dir) is in use by another process" <<<"$out" ||
    { kill -9 $launcher; fail "$what: no clear message: $out"; }
}
refused "a fresh run with --overwrite" "$train" "${common[@]}" --ranks=2 --steps=5 --overwrite --out_dir="$dir"
refused "--resume" "$train" "${common[@]}" --ranks=2 --steps=2000000 --resume --out_dir="$dir"
refused "one rank" "$train" --steps=5 --overwrite --out_dir="$dir"
refused "a hand-started mpirun" mpirun -np 2 --oversubscribe --allow-run-as-root \
  "$train" "${common[@]}" --steps=5 --overwrite --out_dir="$dir"
# The first run was not disturbed: it still trains, and stops cleanly.
kill -0 $launcher 2>/dev/null || fail "the first run died: $(tail -5 "$dir.log")"
before=$(wc -l <"$dir/train.csv")
kill -INT $launcher
wait $launcher; code=$?
[ "$code" -eq 130 ] || fail "the first run's Ctrl-C: exit $code: $(tail -5 "$dir.log")"
last=$(tail -1 "$dir/trajectory.log" | cut -d' ' -f1)
out=$(timeout 300 "$train" "${common[@]}" --ranks=2 --steps=$((last + 4)) --resume --out_dir="$dir" 2>&1) ||
  fail "--resume after the first run stopped: $out"
grep -q "resuming at step $((last + 1))" <<<"$out" || fail "resume: $out"
echo "PASS: the first run trained past $before lines while four others were refused"
