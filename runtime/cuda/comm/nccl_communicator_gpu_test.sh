#!/usr/bin/env bash
# runtime/cuda/comm/nccl_communicator_gpu_check on 2 real MPI processes (see
# its header for what it checks). Every rank must report ok; no run may hang.
# Passes, saying so, when no GPU is visible; with one GPU the checks that
# need one GPU per rank are skipped (NCCL refuses two ranks on one GPU).
set -uo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
# Open MPI's files in this test's own directory, not /tmp and /dev/shm, where
# another mpirun running at once may pick the same job id and share them
# (see runtime/mpi_world_test.sh).
export OMPI_MCA_orte_top_session_dir="$TEST_TMPDIR/ompi" OMPI_MCA_btl_vader_backing_directory="$TEST_TMPDIR/shm"
mkdir -p "$OMPI_MCA_orte_top_session_dir" "$OMPI_MCA_btl_vader_backing_directory"
check=runtime/cuda/comm/nccl_communicator_gpu_check
ranks=2
out=$(timeout 240 mpirun -np "$ranks" --oversubscribe "$check" 2>&1); code=$?
[ "$code" -ne 124 ] || fail "hung: $out"
[ "$code" -eq 0 ] || fail "exit $code: $out"
n=$(grep -c "^rank [0-9]*: ok$" <<<"$out")
if [ "$n" -eq 0 ] && grep -q "^fewer than 2 GPUs: skipped$" <<<"$out"; then
  echo "no GPU: skipped"
  exit 0
fi
[ "$n" -eq "$ranks" ] || fail "$n of $ranks ranks reported ok: $out"
if grep -q "^fewer than 2 GPUs: skipped$" <<<"$out"; then
  echo "one GPU: the one-GPU checks passed; fewer than 2 GPUs: the NCCL checks across GPUs skipped"
else
  echo "$ranks ranks on $ranks GPUs: ok"
fi
echo PASS
