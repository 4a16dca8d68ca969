# Sourced by the multi-rank tests that check what a run leaves behind: Open
# MPI's shared-memory files and session directories go under $TEST_TMPDIR,
# and `leftovers` prints how many files and directories are there.
export OMPI_MCA_btl_vader_backing_directory="$TEST_TMPDIR/shm" TMPDIR="$TEST_TMPDIR/tmp"
mkdir -p "$OMPI_MCA_btl_vader_backing_directory" "$TMPDIR"
leftovers() { find "$OMPI_MCA_btl_vader_backing_directory" "$TMPDIR" -mindepth 1 | wc -l; }
