#include "runtime/launcher.h"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/subprocess.h"
#include "base/temporary_directory.h"
#include "runtime/mpirun_output.h"

namespace zosched {

namespace {

constexpr char kLauncherVariable[] = "ZOSCHED_LAUNCHER";

// How long mpirun may take to end a job once Open MPI has said it is
// ending (it ends a job on reachable machines in well under a second).
constexpr std::chrono::seconds kMpirunEndingLimit(20);

}  // namespace

absl::StatusOr<MpiJobDirectory> MpiJobDirectory::Create() {
  ASSIGN_OR_RETURN(std::string path,
                   MakeTemporaryDirectory("zosched-job", "Open MPI's files of the job"));
  return MpiJobDirectory(std::move(path));
}

MpiJobDirectory::~MpiJobDirectory() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::vector<std::pair<std::string, std::string>> MpiJobDirectory::Environment(
    bool named_hosts) const {
  if (named_hosts) return {{"OMPI_MCA_orte_local_tmpdir_base", path_}};
  return {{"OMPI_MCA_orte_top_session_dir", path_}, {"OMPI_MCA_btl_vader_backing_directory", path_}};
}

bool StartedByMpiLauncher() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr;
}

bool StartedByZoschedLauncher() {
  return StartedByMpiLauncher() && std::getenv(kLauncherVariable) != nullptr;
}

std::vector<std::string> ArgsWithoutRanks(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    bool launcher_flag = false;
    for (const char* flag : {"ranks", "hosts", "hostfile"}) {
      for (const char* dashes : {"--", "-"}) {
        const std::string name = absl::StrCat(dashes, flag);
        if (absl::StartsWith(a, name + "=")) launcher_flag = true;
        if (a == name) {
          launcher_flag = true;
          ++i;  // and its value
        }
      }
    }
    if (!launcher_flag) args.push_back(a);
  }
  return args;
}

absl::StatusOr<std::vector<std::string>> MpirunArgv(int ranks,
                                                    const std::vector<std::string>& args,
                                                    const std::string& hosts) {
  ASSIGN_OR_RETURN(const std::string self, ThisProgramPath());
  std::vector<std::string> argv = {"mpirun", "-np", absl::StrCat(ranks), "--oversubscribe"};
  if (geteuid() == 0) argv.push_back("--allow-run-as-root");
  if (!hosts.empty()) argv.insert(argv.end(), {"--host", hosts});
  argv.push_back(self);
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

absl::StatusOr<int> RunUnderMpirun(int ranks, const std::vector<std::string>& args,
                                   int* stop_signal, const MpiJobDirectory* job_directory,
                                   const std::string& hosts) {
  Subprocess mpirun;
  ASSIGN_OR_RETURN(mpirun.argv, MpirunArgv(ranks, args, hosts));
  ASSIGN_OR_RETURN(const std::string self, ThisProgramPath());
  const std::string program = std::filesystem::path(self).filename();
  // Its own process group: a terminal's Ctrl-C reaches the launcher only.
  // Then it must not read the terminal (a background group would be
  // stopped), and the ranks need no stdin.
  mpirun.own_process_group = true;
  mpirun.stdin_from_dev_null = true;
  mpirun.forward_signals = {{SIGINT, SIGUSR1}, {SIGTERM, SIGUSR1}};
  mpirun.parent_death_signal = SIGUSR1;
  std::optional<MpiJobDirectory> own_directory;
  if (job_directory == nullptr) {
    ASSIGN_OR_RETURN(MpiJobDirectory created, MpiJobDirectory::Create());
    job_directory = &own_directory.emplace(std::move(created));
  }
  mpirun.environment = job_directory->Environment(/*named_hosts=*/!hosts.empty());
  mpirun.environment.push_back({kLauncherVariable, "1"});
  MpirunOutputFilter filter;
  mpirun.stderr_lines = [&filter](absl::string_view line) {
    for (const std::string& shown : filter.Take(line)) std::fprintf(stderr, "%s\n", shown.c_str());
  };
  // Once Open MPI says the job is ending, mpirun ends it within moments,
  // unless it waits on a machine it cannot reach (a cut link): then it is
  // killed, and the ranks there end by their own deadlines.
  std::optional<std::chrono::steady_clock::time_point> ending_since;
  bool gave_up = false;
  mpirun.give_up = [&] {
    if (!filter.ending()) return false;
    const auto now = std::chrono::steady_clock::now();
    if (!ending_since) ending_since = now;
    gave_up = now - *ending_since > kMpirunEndingLimit;
    return gave_up;
  };
  absl::StatusOr<int> status = RunSubprocess(mpirun, stop_signal);
  for (const std::string& shown : filter.Finish()) std::fprintf(stderr, "%s\n", shown.c_str());
  if (!filter.killed_rank().empty()) {
    std::fprintf(stderr, "%s: %s; mpirun ended the other ranks\n", program.c_str(),
                 filter.killed_rank().c_str());
  }
  if (gave_up) {
    return absl::DeadlineExceededError(absl::StrFormat(
        "mpirun had not ended the job %d s after its ranks began ending (a machine it cannot "
        "reach?): killed it; ranks on such a machine end by their own deadlines",
        kMpirunEndingLimit.count()));
  }
  if (absl::IsNotFound(status.status())) {
    return absl::FailedPreconditionError(
        "mpirun not found: install Open MPI (Debian: openmpi-bin; ./bazelw installs it)");
  }
  if (absl::IsAborted(status.status())) {
    return absl::AbortedError(
        absl::StrCat(status.status().message(), "; its ranks went with it"));
  }
  return status;
}

absl::Status CheckNodesReachable(const std::vector<std::string>& nodes,
                                 std::chrono::seconds limit) {
  for (const std::string& node : nodes) {
    Subprocess probe;
    probe.argv = {"timeout", absl::StrCat(limit.count()), "mpirun", "--host", node + ":1", "-np",
                  "1"};
    if (geteuid() == 0) probe.argv.push_back("--allow-run-as-root");
    probe.argv.push_back("true");
    probe.stdin_from_dev_null = true;
    // Its first line that says something: the remote shell's own error
    // (ssh's "Could not resolve hostname", the testbed's "not up") comes
    // before Open MPI's general advice.
    std::string first_line;
    probe.stderr_lines = [&first_line](absl::string_view line) {
      const absl::string_view text = absl::StripAsciiWhitespace(line);
      if (first_line.empty() && !text.empty() &&
          text.find_first_not_of('-') != absl::string_view::npos) {
        first_line = std::string(text);
      }
    };
    ASSIGN_OR_RETURN(const MpiJobDirectory directory, MpiJobDirectory::Create());
    probe.environment = directory.Environment(/*named_hosts=*/true);
    absl::StatusOr<int> status = RunSubprocess(probe);
    if (absl::IsNotFound(status.status())) {
      return absl::FailedPreconditionError(
          "mpirun or timeout not found: install Open MPI (Debian: openmpi-bin) and coreutils");
    }
    if (!status.ok() || *status != 0) {
      const std::string why =
          !status.ok()   ? std::string(status.status().message())
          : *status == 124 ? absl::StrFormat("no answer within %d s", limit.count())
                           : absl::StrFormat("mpirun exited %d", *status);
      return absl::UnavailableError(absl::StrFormat(
          "machine '%s' is not reachable: %s%s (check that it runs, that mpirun reaches it "
          "(ssh, or OMPI_MCA_plm_rsh_agent) and that it has this program's path)",
          node, why, first_line.empty() ? "" : absl::StrCat(": ", first_line)));
    }
  }
  return absl::OkStatus();
}

}  // namespace zosched
