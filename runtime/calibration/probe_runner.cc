#include "runtime/calibration/probe_runner.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "runtime/launcher.h"

namespace zosched {

absl::StatusOr<std::vector<double>> RunProbe(const CalibrationSettings& settings, int ranks,
                                             const std::string& probe, const std::string& hosts) {
  const std::string results =
      absl::StrFormat("/tmp/zosched_calibrate_%d_%s_%d.txt", getpid(), probe, ranks);
  ASSIGN_OR_RETURN(
      const int status,
      RunUnderMpirun(
          ranks,
          {absl::StrCat("--backend=", settings.backend),
           absl::StrCat("--cluster=", settings.cluster), absl::StrCat("--model=", settings.model),
           absl::StrCat("--batch=", settings.batch), absl::StrCat("--seq=", settings.seq),
           absl::StrCat("--repeats=", settings.repeats), absl::StrCat("--", probe, "=", results)},
          /*stop_signal=*/nullptr, /*job_directory=*/nullptr, hosts));
  if (status != 0) {
    return absl::InternalError(
        absl::StrFormat("the %s probe on %d ranks exited %d", probe, ranks, status));
  }
  std::ifstream in(results);
  std::vector<double> numbers;
  for (double x; in >> x;) numbers.push_back(x);
  std::remove(results.c_str());
  return numbers;
}

}  // namespace zosched
