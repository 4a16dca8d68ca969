#!/usr/bin/env bash
# Launches third_party/mpi_smoke on 3 real MPI processes.
set -euo pipefail
# Open MPI's files in this test's own directory, not /tmp and /dev/shm, where
# another mpirun running at once may pick the same job id and share them
# (see runtime/mpi_world_test.sh).
export OMPI_MCA_orte_top_session_dir="$TEST_TMPDIR/ompi" OMPI_MCA_btl_vader_backing_directory="$TEST_TMPDIR/shm"
mkdir -p "$OMPI_MCA_orte_top_session_dir" "$OMPI_MCA_btl_vader_backing_directory"
out=$(mpirun -np 3 third_party/mpi_smoke)
echo "$out"
grep -qx "ranks=3 allreduce_sum=3 shared_window_ranks=3: ok" <<<"$out"
