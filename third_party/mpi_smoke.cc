// Checks that Open MPI, as wrapped by //third_party (@local_mpi), launches
// real processes under `bazel test` and provides what the runtime relies on:
// collectives across ranks and an MPI-3 shared-memory window per node.
// Exits 0 only if every rank sees the expected values.
#include <mpi.h>

#include <cstdio>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  int sum = rank;
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  bool ok = sum == size * (size - 1) / 2;

  // One shared window on the node: rank 0 owns it, every rank writes its own
  // slot, and after a barrier every rank reads every slot.
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int node_rank = 0, node_size = 0;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_size(node, &node_size);
  int* slots = nullptr;
  MPI_Win win;
  MPI_Aint bytes = node_rank == 0 ? node_size * sizeof(int) : 0;
  MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, node, &slots, &win);
  MPI_Aint owner_bytes = 0;
  int disp = 0;
  MPI_Win_shared_query(win, 0, &owner_bytes, &disp, &slots);
  MPI_Win_lock_all(0, win);
  slots[node_rank] = 100 + node_rank;
  MPI_Win_sync(win);
  MPI_Barrier(node);
  MPI_Win_sync(win);
  for (int r = 0; r < node_size; ++r) ok = ok && slots[r] == 100 + r;
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Comm_free(&node);

  int all_ok = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("ranks=%d allreduce_sum=%d shared_window_ranks=%d: %s\n", size, sum,
                node_size, all_ok ? "ok" : "MISMATCH");
  }
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
