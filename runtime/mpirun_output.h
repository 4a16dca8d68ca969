// What the user sees of mpirun's stderr when train's launcher starts the
// ranks (runtime/launcher.h): the ranks' own lines, unchanged, and none of
// Open MPI's notices about an ending it has already been told of.
//
// A failing rank prints its error ("rank 2: ...") and aborts the job;
// Open MPI then adds a boxed notice (a block between two lines of dashes)
// that MPI_ABORT was called, that the job was aborted because a process
// exited non-zero, and "[host:pid] ..." lines from its help aggregation
// (including "ORTE_ERROR_LOG ... show_help.c" when ranks abort together).
// Those are dropped, so the rank's message stays the job's last words. A
// rank killed by a signal cannot speak for itself: Open MPI's notice of it
// is kept as `killed_rank()`, for the launcher to say in one line. Any
// other notice (Open MPI failing to start the ranks, say) is passed on
// whole: only endings the ranks explain are hidden.
#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace zosched {

class MpirunOutputFilter {
 public:
  // Takes the next line of mpirun's stderr (without its '\n') and returns
  // the lines to show for it: none while a notice is being read or for a
  // dropped line or notice, a whole notice (its dashes included) when one
  // that is passed on ends, or the line itself.
  std::vector<std::string> Take(absl::string_view line);

  // At the end of the output: the lines of a notice that never closed.
  std::vector<std::string> Finish();

  // "rank N (node H) was killed by signal S (SIGNAME)" for the first rank
  // that Open MPI reported killed by a signal; "" if none was.
  const std::string& killed_rank() const { return killed_rank_; }

  // Whether Open MPI has said that the job is ending because of a rank
  // (MPI_ABORT, a non-zero exit, a rank killed by a signal).
  bool ending() const { return ending_; }

 private:
  // The lines to show for a finished notice `lines` (its dashes included):
  // none, or the notice as it was.
  std::vector<std::string> Replace(const std::vector<std::string>& lines);

  bool in_notice_ = false;
  std::vector<std::string> notice_;  // the open notice, first dashes included
  std::string killed_rank_;
  bool ending_ = false;
};

}  // namespace zosched
