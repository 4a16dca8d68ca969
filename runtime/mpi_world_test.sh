#!/usr/bin/env bash
# runtime/mpi_world_check on 2 and 4 real MPI processes (see its header for
# what it checks). Every rank must report ok; no run may hang.
set -uo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
for ranks in 2 4; do
  out=$(timeout 120 mpirun -np "$ranks" --oversubscribe runtime/mpi_world_check 2>&1); code=$?
  [ "$code" -ne 124 ] || fail "$ranks ranks: hung: $out"
  [ "$code" -eq 0 ] || fail "$ranks ranks: exit $code: $out"
  n=$(grep -c "^rank [0-9]*: ok$" <<<"$out")
  [ "$n" -eq "$ranks" ] || fail "$ranks ranks: $n ranks reported ok: $out"
  echo "$ranks ranks: ok"
done
echo PASS
