#!/usr/bin/env bash
# runtime/mpi_world_check on 2 and 4 real MPI processes (see its header for
# what it checks). Every rank must report ok; no run may hang.
set -uo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
# Open MPI's session directory and shared-memory segments in this test's own
# directory: in /tmp and /dev/shm, two runs at once (--runs_per_test, or
# another test's mpirun) can pick the same job id (each sandbox numbers its
# processes from 1) and attach to each other's segments (seen: rank
# segfaults in mca_btl_vader_poll_handle_frag, hangs).
export OMPI_MCA_orte_top_session_dir="$TEST_TMPDIR/ompi" OMPI_MCA_btl_vader_backing_directory="$TEST_TMPDIR/shm"
mkdir -p "$OMPI_MCA_orte_top_session_dir" "$OMPI_MCA_btl_vader_backing_directory"
for ranks in 2 4; do
  out=$(timeout 120 mpirun -np "$ranks" --oversubscribe runtime/mpi_world_check 2>&1); code=$?
  [ "$code" -ne 124 ] || fail "$ranks ranks: hung: $out"
  [ "$code" -eq 0 ] || fail "$ranks ranks: exit $code: $out"
  n=$(grep -c "^rank [0-9]*: ok$" <<<"$out")
  [ "$n" -eq "$ranks" ] || fail "$ranks ranks: $n ranks reported ok: $out"
  echo "$ranks ranks: ok"
done
echo PASS
