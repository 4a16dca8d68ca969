#!/usr/bin/env bash
# runtime/cuda/comm/host_staged_communicator_gpu_check on 2 and 4 real MPI
# processes sharing GPU 0 (see its header for what it checks). Every rank
# must report ok; no run may hang. Passes, saying so, when no GPU is visible.
set -uo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
# Open MPI's files in this test's own directory, not /tmp and /dev/shm, where
# another mpirun running at once may pick the same job id and share them
# (see runtime/mpi_world_test.sh).
export OMPI_MCA_orte_top_session_dir="$TEST_TMPDIR/ompi" OMPI_MCA_btl_vader_backing_directory="$TEST_TMPDIR/shm"
mkdir -p "$OMPI_MCA_orte_top_session_dir" "$OMPI_MCA_btl_vader_backing_directory"
check=runtime/cuda/comm/host_staged_communicator_gpu_check
for ranks in 2 4; do
  out=$(timeout 120 mpirun -np "$ranks" --oversubscribe "$check" 2>&1); code=$?
  [ "$code" -ne 124 ] || fail "$ranks ranks: hung: $out"
  [ "$code" -eq 0 ] || fail "$ranks ranks: exit $code: $out"
  if grep -q "^no GPU: skipped$" <<<"$out"; then
    echo "no GPU: skipped"
    exit 0
  fi
  n=$(grep -c "^rank [0-9]*: ok$" <<<"$out")
  [ "$n" -eq "$ranks" ] || fail "$ranks ranks: $n ranks reported ok: $out"
  echo "$ranks ranks: ok"
done
echo PASS
