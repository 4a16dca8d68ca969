#include "runtime/mpirun_output.h"

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace zosched {
namespace {

// Runs `output` (mpirun's stderr, as Open MPI 4.1 printed it in real runs
// of train) through a filter and returns what the user sees.
std::vector<std::string> Shown(const std::string& output, MpirunOutputFilter* filter) {
  std::vector<std::string> shown;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    for (std::string& s : filter->Take(line)) shown.push_back(std::move(s));
  }
  for (std::string& s : filter->Finish()) shown.push_back(std::move(s));
  return shown;
}

const char kDashes[] =
    "--------------------------------------------------------------------------";

TEST(MpirunOutputFilter, ARankThatAbortsHasTheLastWord) {
  const std::string output = std::string() +
      "rank 0: model 'opt-350m' is post-norm (norm_placement POST_NORM); the runtime runs pre-norm blocks\n"
      "rank 1: model 'opt-350m' is post-norm (norm_placement POST_NORM); the runtime runs pre-norm blocks\n"
      "[vm:23099] [[14021,0],0] ORTE_ERROR_LOG: Out of resource in file "
      "../../../orte/util/show_help.c at line 501\n" +
      kDashes + "\n"
      "MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD\n"
      "with errorcode 2.\n"
      "\n"
      "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.\n"
      "You may or may not see output from other processes, depending on\n"
      "exactly when Open MPI kills them.\n" +
      kDashes + "\n"
      "[vm:23491] 1 more process has sent help message help-mpi-api.txt / mpi-abort\n"
      "[vm:23491] Set MCA parameter \"orte_base_help_aggregate\" to 0 to see all help / error "
      "messages";
  MpirunOutputFilter filter;
  EXPECT_EQ(Shown(output, &filter),
            (std::vector<std::string>{
                "rank 0: model 'opt-350m' is post-norm (norm_placement POST_NORM); the runtime runs pre-norm blocks",
                "rank 1: model 'opt-350m' is post-norm (norm_placement POST_NORM); the runtime runs pre-norm blocks"}));
  EXPECT_EQ(filter.killed_rank(), "");
  EXPECT_TRUE(filter.ending());
}

TEST(MpirunOutputFilter, ARankKilledByASignalIsNamedOnce) {
  const std::string output = std::string() + kDashes + "\n"
      "Primary job  terminated normally, but 1 process returned\n"
      "a non-zero exit code. Per user-direction, the job has been aborted.\n" +
      kDashes + "\n" + kDashes + "\n"
      "mpirun noticed that process rank 3 with PID 0 on node vm exited on signal 9 (Killed).\n" +
      kDashes;
  MpirunOutputFilter filter;
  EXPECT_EQ(Shown(output, &filter), std::vector<std::string>{});
  EXPECT_EQ(filter.killed_rank(), "rank 3 (node vm) was killed by signal 9 (SIGKILL)");
  EXPECT_TRUE(filter.ending());
}

TEST(MpirunOutputFilter, ANonZeroExitNoticeIsDropped) {
  const std::string output = std::string() + "rank 0: a step failed\n" + kDashes + "\n"
      "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
      "the job to be terminated. The first process to do so was:\n"
      "\n"
      "  Process name: [[50613,1],0]\n"
      "  Exit code:    1\n" +
      kDashes;
  MpirunOutputFilter filter;
  EXPECT_EQ(Shown(output, &filter), std::vector<std::string>{"rank 0: a step failed"});
}

TEST(MpirunOutputFilter, NoticesItCannotExplainArePassedOnWhole) {
  // Open MPI failing to start the ranks: the user must see all of it.
  const std::vector<std::string> notice = {
      kDashes,
      "There are not enough slots available in the system to satisfy the 4",
      "slots that were requested by the application:",
      kDashes};
  MpirunOutputFilter filter;
  std::vector<std::string> shown;
  for (const std::string& line : notice) {
    for (std::string& s : filter.Take(line)) shown.push_back(s);
  }
  EXPECT_EQ(shown, notice);
  EXPECT_FALSE(filter.ending());  // not an ending a rank explains
  // An unfinished one too, at the end.
  EXPECT_TRUE(filter.Take(kDashes).empty());
  EXPECT_TRUE(filter.Take("mpirun was unable to launch").empty());
  EXPECT_EQ(filter.Finish(), (std::vector<std::string>{kDashes, "mpirun was unable to launch"}));
}

TEST(MpirunOutputFilter, OtherLinesPassUnchanged) {
  MpirunOutputFilter filter;
  EXPECT_EQ(filter.Take("[not open mpi] a rank's own line"),
            std::vector<std::string>{"[not open mpi] a rank's own line"});
  EXPECT_EQ(filter.Take(""), std::vector<std::string>{""});
  EXPECT_EQ(filter.Take("--- a short rule ---"), std::vector<std::string>{"--- a short rule ---"});
}

}  // namespace
}  // namespace zosched
