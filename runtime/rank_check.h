// What the multi-rank checks (binaries that mpirun starts, each rank checking
// what it sees) share: starting MPI, and failing the whole job at the first
// failed check with a message naming the rank.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace zosched {
namespace rank_check {

// This process's MPI rank, for messages; set by StartRanks.
extern int g_rank;

// Starts MPI (InitMpi) and sets g_rank; returns the number of ranks. When
// MPI does not start, prints "TOOL: MESSAGE" to stderr and exits 1.
int StartRanks(const char* tool, int* argc, char*** argv);

// Unless `ok`: prints "rank R: FAILED: what" to stderr and aborts every rank
// (exit status 1).
void Check(bool ok, const std::string& what);

// Check(status.ok()), the message followed by ": " and the status.
void CheckOk(const absl::Status& status, const std::string& what);

}  // namespace rank_check
}  // namespace zosched
