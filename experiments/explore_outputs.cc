#include "experiments/explore_outputs.h"

#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/output_dir.h"
#include "base/status_macros.h"
#include "experiments/predicted_case.h"
#include "experiments/sweep_report.h"
#include "experiments/sweep_space.h"

namespace zosched {
namespace {

// A chart's files: NAME + one of these.
constexpr const char* kChartExtensions[] = {".csv", ".dat", ".gp", ".png", ".gp.log"};

bool IsChartName(const std::string& name) {
  if (name == kParetoGpusChart || name == kParetoCostChart) return true;
  for (const std::string& x : SweepKnobColumns()) {
    for (const std::string& y : SweepKnobColumns()) {
      if (name == HeatMapChart(x, y)) return true;
    }
  }
  return false;
}

// "NN_SLUG.pb" (two or more digits, then '_' and a name).
bool IsBestScheduleName(const std::string& name) {
  size_t digits = 0;
  while (digits < name.size() && absl::ascii_isdigit(name[digits])) ++digits;
  return digits >= 2 && name.size() > digits + 1 + 3 && name[digits] == '_' &&
         absl::EndsWith(name, ".pb");
}

absl::Status OsError(const std::error_code& error, const std::string& what) {
  return absl::ErrnoToStatus(error.value(), absl::StrCat(what, ": ", error.message()));
}

// The entries of `dir` (an existing directory), by file name.
absl::StatusOr<std::vector<std::string>> Entries(const std::string& dir) {
  std::error_code error;
  std::vector<std::string> names;
  for (std::filesystem::directory_iterator it(dir, error), end; !error && it != end;
       it.increment(error)) {
    names.push_back(it->path().filename().string());
  }
  if (error) return OsError(error, absl::StrCat("cannot read directory ", dir));
  return names;
}

}  // namespace

std::string BestScheduleFile(int rank, const std::string& label) {
  return absl::StrFormat("%s/%02d_%s.pb", kBestDir, rank, Slug(label));
}

std::string ClusterFile(const std::string& label) {
  return absl::StrCat(kClustersDir, "/", Slug(label), ".pbtxt");
}

bool IsExploreOutput(const std::string& relative_path) {
  const size_t slash = relative_path.find('/');
  if (slash != std::string::npos) {
    const std::string dir = relative_path.substr(0, slash);
    const std::string name = relative_path.substr(slash + 1);
    if (name.find('/') != std::string::npos) return false;
    if (dir == kBestDir) return IsBestScheduleName(name);
    return dir == kClustersDir && name.size() > 6 && absl::EndsWith(name, ".pbtxt");
  }
  if (relative_path == kConfigurationsCsv || relative_path == kBestMarkdown) return true;
  for (const char* extension : kChartExtensions) {
    if (absl::EndsWith(relative_path, extension) &&
        IsChartName(relative_path.substr(0, relative_path.size() - strlen(extension)))) {
      return true;
    }
  }
  return false;
}

absl::Status CheckOutputDirectory(const std::string& dir, bool overwrite) {
  ASSIGN_OR_RETURN(const bool taken, DirectoryHasEntries(dir));
  if (!taken || overwrite) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s is not empty (an earlier run's outputs?): --overwrite replaces the explorer's files "
      "there, or choose another --out_dir",
      dir));
}

absl::StatusOr<int> RemoveExploreOutputs(const std::string& dir) {
  ASSIGN_OR_RETURN(const bool exists, DirectoryHasEntries(dir));
  if (!exists) return 0;
  int removed = 0;
  // Top-level files first, then those in best/ and clusters/.
  for (const std::string& sub : {std::string(), std::string(kBestDir), std::string(kClustersDir)}) {
    const std::string path = sub.empty() ? dir : dir + "/" + sub;
    std::error_code error;
    if (!sub.empty() && !std::filesystem::is_directory(path, error)) continue;
    ASSIGN_OR_RETURN(const std::vector<std::string> names, Entries(path));
    for (const std::string& name : names) {
      const std::string relative = sub.empty() ? name : sub + "/" + name;
      if (!IsExploreOutput(relative)) continue;
      const std::string file = dir + "/" + relative;
      if (!std::filesystem::is_regular_file(file, error)) continue;  // e.g. a directory
      std::filesystem::remove(file, error);
      if (error) return OsError(error, absl::StrCat("cannot remove ", file));
      ++removed;
    }
    if (!sub.empty() && std::filesystem::is_empty(path, error)) {
      std::filesystem::remove(path, error);
      if (error) return OsError(error, absl::StrCat("cannot remove ", path));
    }
  }
  return removed;
}

}  // namespace zosched
