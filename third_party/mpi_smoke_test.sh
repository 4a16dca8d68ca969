#!/usr/bin/env bash
# Launches third_party/mpi_smoke on 3 real MPI processes.
set -euo pipefail
out=$(mpirun -np 3 third_party/mpi_smoke)
echo "$out"
grep -qx "ranks=3 allreduce_sum=3 shared_window_ranks=3: ok" <<<"$out"
