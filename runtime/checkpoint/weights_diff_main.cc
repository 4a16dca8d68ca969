// Compares the weights of two safetensors checkpoints tensor by tensor and
// fails when any differs by more than the tolerance:
//
//   bazel run //runtime/checkpoint:weights_diff -- A.safetensors B.safetensors --max_rel=1e-3
//
// Prints the largest absolute and relative difference (relative to
// max(|a|, |b|, --floor)) per tensor and overall. A NaN or Inf in either
// file (even the same one in both) is a failure, reported with its tensor,
// element index and the two values. Exit status: 0 within tolerance, 1
// beyond it or any NaN/Inf, 2 for bad arguments or unreadable files.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/command_line.h"
#include "base/user_path.h"
#include "runtime/checkpoint/safetensors.h"
#include "runtime/checkpoint/weights_diff.h"

ABSL_FLAG(double, max_rel, 1e-3, "the largest relative difference allowed");
ABSL_FLAG(double, floor, 1e-2, "relative differences divide by at least this");

int main(int argc, char** argv) {
  const std::vector<std::string> args = zosched::ParseCommandLineOrExit(
      argc, argv,
      {"weights_diff", "A.safetensors B.safetensors",
       "Compares the weights of two safetensors checkpoints tensor by tensor: exit 0 within\n"
       "--max_rel, 1 beyond it or for any NaN/Inf, 2 for bad arguments or unreadable files."});
  const double max_rel = absl::GetFlag(FLAGS_max_rel), floor = absl::GetFlag(FLAGS_floor);
  if (!(max_rel >= 0) || !(floor > 0)) {
    return zosched::ReportError(
        "weights_diff", absl::InvalidArgumentError("--max_rel must be >= 0 and --floor > 0"));
  }
  absl::StatusOr<zosched::SafetensorsFile> a =
      zosched::ReadSafetensors(zosched::ResolveUserPath(args[0]));
  absl::StatusOr<zosched::SafetensorsFile> b =
      zosched::ReadSafetensors(zosched::ResolveUserPath(args[1]));
  // Whatever the error (DataLoss for a damaged file too), the input is bad: 2.
  for (const absl::Status& s : {a.status(), b.status()}) {
    if (!s.ok()) {
      zosched::ReportError("weights_diff", s);
      return 2;
    }
  }
  absl::StatusOr<std::vector<zosched::TensorDiff>> diffs = zosched::WeightsDiff(*a, *b, floor);
  if (!diffs.ok()) {
    zosched::ReportError("weights_diff", diffs.status());
    return 2;
  }
  double worst_abs = 0, worst_rel = 0;
  int64_t non_finite = 0;
  for (const zosched::TensorDiff& d : *diffs) {
    std::printf("%-60s %10ld elements  max |diff| %.3g  max rel %.3g%s\n", d.name.c_str(),
                static_cast<long>(d.elements), d.max_abs, d.max_rel,
                d.non_finite == 0 ? "" : absl::StrFormat("  %d NaN/Inf", d.non_finite).c_str());
    worst_abs = std::max(worst_abs, d.max_abs);
    worst_rel = std::max(worst_rel, d.max_rel);
    non_finite += d.non_finite;
  }
  std::printf("overall: max |diff| %.3g, max rel %.3g (allowed %.3g)%s\n", worst_abs, worst_rel,
              max_rel,
              non_finite == 0 ? ""
                              : absl::StrFormat(" over the finite elements; %d NaN/Inf elements",
                                                non_finite)
                                    .c_str());
  for (const zosched::TensorDiff& d : *diffs) {
    if (d.non_finite == 0) continue;
    std::fprintf(stderr,
                 "weights_diff: tensor '%s' element %ld is %g in %s and %g in %s (NaN or Inf "
                 "at %ld of its %ld elements): weights must be finite, so the files differ at "
                 "any tolerance\n",
                 d.name.c_str(), static_cast<long>(d.first_non_finite), d.first_non_finite_a,
                 a->path().c_str(), d.first_non_finite_b, b->path().c_str(),
                 static_cast<long>(d.non_finite), static_cast<long>(d.elements));
  }
  return worst_rel <= max_rel && non_finite == 0 ? 0 : 1;
}
