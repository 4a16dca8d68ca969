// Compares the weights of two safetensors checkpoints tensor by tensor and
// fails when any differs by more than the tolerance:
//
//   bazel run //runtime/checkpoint:weights_diff -- A.safetensors B.safetensors --max_rel=1e-3
//
// Prints the largest absolute and relative difference (relative to
// max(|a|, |b|, --floor)) per tensor and overall. Exit status: 0 within
// tolerance, 1 beyond it, 2 for bad arguments or unreadable files.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "base/user_path.h"
#include "runtime/checkpoint/safetensors.h"
#include "runtime/checkpoint/weights_diff.h"

ABSL_FLAG(double, max_rel, 1e-3, "the largest relative difference allowed");
ABSL_FLAG(double, floor, 1e-2, "relative differences divide by at least this");

int main(int argc, char** argv) {
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() != 3) {
    std::fprintf(stderr, "usage: weights_diff A.safetensors B.safetensors [--max_rel=X]\n");
    return 2;
  }
  const double max_rel = absl::GetFlag(FLAGS_max_rel), floor = absl::GetFlag(FLAGS_floor);
  if (!(max_rel >= 0) || !(floor > 0)) {
    std::fprintf(stderr, "weights_diff: --max_rel must be >= 0 and --floor > 0\n");
    return 2;
  }
  absl::StatusOr<zosched::SafetensorsFile> a =
      zosched::ReadSafetensors(zosched::ResolveUserPath(args[1]));
  absl::StatusOr<zosched::SafetensorsFile> b =
      zosched::ReadSafetensors(zosched::ResolveUserPath(args[2]));
  for (const absl::Status& s : {a.status(), b.status()}) {
    if (!s.ok()) {
      std::fprintf(stderr, "weights_diff: %s\n", std::string(s.message()).c_str());
      return 2;
    }
  }
  absl::StatusOr<std::vector<zosched::TensorDiff>> diffs = zosched::WeightsDiff(*a, *b, floor);
  if (!diffs.ok()) {
    std::fprintf(stderr, "weights_diff: %s\n", std::string(diffs.status().message()).c_str());
    return 2;
  }
  double worst_abs = 0, worst_rel = 0;
  for (const zosched::TensorDiff& d : *diffs) {
    std::printf("%-60s %10ld elements  max |diff| %.3g  max rel %.3g\n", d.name.c_str(),
                static_cast<long>(d.elements), d.max_abs, d.max_rel);
    worst_abs = std::max(worst_abs, d.max_abs);
    worst_rel = std::max(worst_rel, d.max_rel);
  }
  std::printf("overall: max |diff| %.3g, max rel %.3g (allowed %.3g)\n", worst_abs, worst_rel,
              max_rel);
  return worst_rel <= max_rel ? 0 : 1;
}
