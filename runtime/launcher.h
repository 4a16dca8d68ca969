// Starting the ranks of a run: `bazel run //train -- --ranks=4 ...`
// runs this program again under `mpirun -np 4` and waits for it; programs
// started by mpirun (or with one rank) run directly. Calibration starts its
// multi-process probes the same way.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace zosched {

// True if this process was started by an MPI launcher (Open MPI sets
// OMPI_COMM_WORLD_SIZE; PMI-based launchers set PMI_SIZE).
bool StartedByMpiLauncher();

// True if this process is a rank that RunUnderMpirun started (it sets
// ZOSCHED_LAUNCHER in the ranks' environment): the launcher has made the
// checks and holds what it holds for the whole job (train: the output
// directory's lock), which a hand-started mpirun's ranks must do
// themselves.
bool StartedByZoschedLauncher();

// A new directory for every file Open MPI makes for one job (its session
// directory, which holds the MPI windows' backing files, and the
// shared-memory transport's segments) and for the files its launcher
// hands the ranks, under $TMPDIR (or /tmp), removed
// with everything in it when this object goes. Jobs never share these
// files, even where process ids repeat (containers, sandboxes with their
// own pid namespaces but one /tmp and /dev/shm), and a job that ends
// however it ends leaves none behind.
class MpiJobDirectory {
 public:
  // Errors: Internal naming the path and the OS reason.
  static absl::StatusOr<MpiJobDirectory> Create();
  MpiJobDirectory(MpiJobDirectory&& other) noexcept : path_(std::move(other.path_)) {
    other.path_.clear();
  }
  MpiJobDirectory& operator=(MpiJobDirectory&&) = delete;
  ~MpiJobDirectory();

  // Open MPI's session directory. At the start of a job Open MPI removes
  // the plain files in it (files for the ranks go in a subdirectory); at
  // the end it removes the directory if nothing else is left there (so the
  // ranks remove the files they were given once they have read them).
  const std::string& path() const { return path_; }
  // The environment that points Open MPI there (mpirun passes it to its
  // ranks and daemons; a process of one rank sets it before MPI_Init).
  // Without `named_hosts` (every rank on this machine) this directory is
  // Open MPI's session directory itself and holds the shared-memory
  // transport's segments. With them (mpirun --host), it is the session
  // base of mpirun and of the ranks it starts itself only: the daemons on
  // the named machines keep Open MPI's own session directories (under
  // their /tmp, named after the machine, removed when they end), so a job
  // leaves no directory behind on a machine where this path means nothing.
  std::vector<std::pair<std::string, std::string>> Environment(bool named_hosts = false) const;

 private:
  explicit MpiJobDirectory(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// The argv of `mpirun -np <ranks> --oversubscribe [--allow-run-as-root]
// [--host <hosts>] <this program> <args...>` (--allow-run-as-root when
// running as root; --host when `hosts`, mpirun's host list, is given).
// Errors: those of ThisProgramPath (base/subprocess.h).
absl::StatusOr<std::vector<std::string>> MpirunArgv(int ranks,
                                                    const std::vector<std::string>& args,
                                                    const std::string& hosts = "");

// Runs this program with `args` on `ranks` ranks under mpirun, waits, and
// returns mpirun's exit status (the first failing rank's).
//
// - Stopping: a SIGINT or SIGTERM this process receives goes to the ranks
//   as SIGUSR1 (mpirun forwards SIGUSR1; it answers SIGINT and SIGTERM by
//   killing the ranks at once), for them to stop cleanly after the step in
//   flight (runtime/stop_signals.h); `stop_signal` then receives that
//   signal (else 0). If this process dies, even by kill -9, mpirun gets
//   the same SIGUSR1 (PR_SET_PDEATHSIG): the ranks stop as on Ctrl-C and
//   mpirun ends after them. mpirun runs in a process group of its own, so a
//   terminal's Ctrl-C reaches this process only.
// - Files: every file Open MPI makes for the job goes into an
//   MpiJobDirectory (`job_directory`, where the caller may have put files
//   for the ranks, e.g. train's schedule, runtime/rank_schedule.h; else one
//   of the call's own), which mpirun removes when it ends and its owner
//   removes too, so that no file is left however mpirun ends (kill -9
//   included).
// - Output: mpirun's stderr is read here (runtime/mpirun_output.h): the
//   ranks' lines pass unchanged, Open MPI's notices of an ending the ranks
//   explain are dropped, and a rank killed by a signal is named in one
//   line at the end. stdout passes untouched.
//
// - Ending: once Open MPI has said that the job is ending (a rank aborted,
//   exited non-zero or was killed), mpirun gets 20 s to end it; one still
//   waiting then (on a machine it cannot reach) is killed.
//
// Errors: FailedPrecondition when mpirun is not installed (Debian:
// openmpi-bin; ./bazelw installs it); DeadlineExceeded when mpirun was
// killed for not ending the job; Aborted "mpirun was killed by signal
// N (SIGNAME); its ranks went with it" when mpirun itself was killed;
// Internal when the job directory cannot be made; RunSubprocess's
// otherwise.
// - Machines: `hosts` (mpirun's --host list, e.g. "node1:2,node2:2") starts
//   the ranks there, by slot in order; "" starts them all on this one.
absl::StatusOr<int> RunUnderMpirun(int ranks, const std::vector<std::string>& args,
                                   int* stop_signal = nullptr,
                                   const MpiJobDirectory* job_directory = nullptr,
                                   const std::string& hosts = "");

// Runs `true` through mpirun on each of `nodes`, one at a time, within
// `limit` each (Open MPI's settings from this process's environment, e.g.
// OMPI_MCA_plm_rsh_agent): OK when every one answers. Errors: Unavailable
// naming the first machine that did not and the first line mpirun's
// stderr gave about it (the remote shell's own error, where it gave one);
// FailedPrecondition when mpirun is not installed.
absl::Status CheckNodesReachable(const std::vector<std::string>& nodes,
                                 std::chrono::seconds limit);

// `argv[1..]` without the launcher's own flags: "--ranks", "--hosts" and
// "--hostfile", each as "--flag=V" or "--flag V".
std::vector<std::string> ArgsWithoutRanks(int argc, char** argv);

}  // namespace zosched
