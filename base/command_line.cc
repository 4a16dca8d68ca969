#include "base/command_line.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <utility>

#include "absl/flags/internal/private_handle_accessor.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace zosched {
namespace {

constexpr char kRule[] =
    "--help, -h or --helpfull prints this. A flag is --name=VALUE or --name VALUE; a bool\n"
    "also --name or --noname; each flag at most once; -- ends the flags.\n"
    "Exit status: 0 on success; 2 for bad usage or input (flags, files, schedules, a plan\n"
    "that does not fit); 1 for a failure while running.\n";

bool IsHelp(absl::string_view name) { return name == "help" || name == "h" || name == "helpfull"; }

// Abseil's own flags (--flagfile, --fromenv, ...), defined in its files.
bool IsAbseils(const absl::CommandLineFlag& flag) {
  const std::string file = flag.Filename();
  return absl::StartsWith(file, "absl/") || absl::StrContains(file, "/absl/");
}

bool IsOurs(const absl::CommandLineFlag& flag) { return !flag.IsRetired() && !IsAbseils(flag); }

std::string TypeName(const absl::CommandLineFlag& flag) {
  if (flag.IsOfType<bool>()) return "bool";
  if (flag.IsOfType<int32_t>()) return "int32";
  if (flag.IsOfType<int64_t>()) return "int64";
  if (flag.IsOfType<uint64_t>()) return "uint64";
  if (flag.IsOfType<double>() || flag.IsOfType<float>()) return "number";
  if (flag.IsOfType<std::string>()) return "string";
  if (flag.IsOfType<std::vector<std::string>>()) return "comma-separated list";
  return "value";
}

// The default as the help shows it: strings and lists quoted.
std::string ShownDefault(const absl::CommandLineFlag& flag) {
  const bool text = flag.IsOfType<std::string>() || flag.IsOfType<std::vector<std::string>>();
  return text ? absl::StrCat("\"", flag.DefaultValue(), "\"") : flag.DefaultValue();
}

// The program's flags, outside Abseil's own, by name.
std::map<std::string, const absl::CommandLineFlag*> OurFlags() {
  std::map<std::string, const absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (IsOurs(*flag)) flags.emplace(std::string(name), flag);
  }
  return flags;
}

// Levenshtein distance.
size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// " (did you mean --NAME?)" for the program's flag nearest `name` when a
// typo away (at most 2 edits, and fewer than half the name), else "".
std::string Suggestion(absl::string_view name) {
  std::string best;
  size_t best_distance = 3;
  for (const auto& [candidate, flag] : OurFlags()) {
    const size_t d = EditDistance(name, candidate);
    if (d < best_distance && 2 * d < candidate.size()) best = candidate, best_distance = d;
  }
  return best.empty() ? "" : absl::StrCat(" (did you mean --", best, "?)");
}

// An argument that starts with '-', split the way Abseil splits it: one or
// two dashes, the name, and the value after the first '='.
struct FlagArgument {
  absl::string_view name;
  absl::string_view value;
  bool has_value = false;  // there was a '=' (the value may be empty)
};

FlagArgument SplitFlag(absl::string_view arg) {
  absl::ConsumePrefix(&arg, "-");
  absl::ConsumePrefix(&arg, "-");
  FlagArgument f;
  const size_t equals = arg.find('=');
  f.name = arg.substr(0, equals);
  if (equals != absl::string_view::npos) {
    f.value = arg.substr(equals + 1);
    f.has_value = true;
  }
  return f;
}

// Whether argv[i] is a flag argument (Abseil's rule: it starts with '-' and
// is not "-" alone) rather than a positional one.
bool LooksLikeFlag(absl::string_view arg) { return arg.size() > 1 && arg[0] == '-'; }

// Whether `arg`, taken as the value of a flag before it, is rather a flag
// of its own or "--"/"-": then the flag before it lacks its value.
bool IsFlagNotValue(absl::string_view arg) {
  if (arg.empty() || arg[0] != '-') return false;
  const absl::string_view name = SplitFlag(arg).name;
  if (name.empty() || IsHelp(name) || absl::FindCommandLineFlag(name) != nullptr) return true;
  return absl::StartsWith(name, "no") && absl::FindCommandLineFlag(name.substr(2)) != nullptr;
}

absl::Status Invalid(const std::string& message) { return absl::InvalidArgumentError(message); }

// What the command line gives: each flag's value as written, and the
// positional arguments, each with a note when it follows a bool flag
// written without '=' (whose value it may have been meant as).
struct Scan {
  std::map<std::string, std::string> values;
  std::vector<std::string> args;
  std::vector<std::string> notes;
};

// Checks the flag argument argv[*i] (and its value, argv[*i + 1], which it
// consumes when the flag takes it from there) and records it in `scan`.
// Sets no flag.
absl::Status CheckFlag(int argc, char** argv, int* i, Scan* scan) {
  const absl::string_view arg = argv[*i];
  const FlagArgument f = SplitFlag(arg);
  const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(f.name);
  bool negative = false;
  if ((flag == nullptr || flag->IsRetired()) && absl::StartsWith(f.name, "no")) {
    flag = absl::FindCommandLineFlag(f.name.substr(2));
    negative = true;
  }
  if (flag != nullptr && IsAbseils(*flag)) {
    return Invalid(absl::StrCat("--", flag->Name(),
                                " is not taken: give every flag on the command line itself"));
  }
  if (flag == nullptr || flag->IsRetired()) {
    return Invalid(absl::StrCat("unknown flag ", arg.substr(0, arg.find('=')), Suggestion(f.name)));
  }
  const std::string name(flag->Name());
  std::string value;
  if (flag->IsOfType<bool>()) {
    if (negative && f.has_value) {
      return Invalid(absl::StrCat(arg, ": --no", name, " takes no value; give --", name,
                                  "=true or --", name, "=false"));
    }
    if (f.has_value && f.value.empty()) {
      return Invalid(absl::StrCat(arg, " lacks its value: give --", name, "=true or --", name,
                                  "=false (or --", name, " or --no", name, ")"));
    }
    value = f.has_value ? std::string(f.value) : negative ? "false" : "true";
  } else {
    if (negative) {
      return Invalid(absl::StrCat(arg, ": --", name, " is not a bool flag; give --", name,
                                  "=VALUE (", TypeName(*flag), ")"));
    }
    if (f.has_value) {
      value = std::string(f.value);
    } else if (*i + 1 >= argc || IsFlagNotValue(argv[*i + 1])) {
      return Invalid(absl::StrCat(
          "--", name, " lacks its value",
          *i + 1 < argc ? absl::StrCat(" (", argv[*i + 1], " after it is not one)") : "",
          ": give --", name, "=VALUE (", TypeName(*flag), ", default ", ShownDefault(*flag), ")"));
    } else {
      value = argv[++*i];
    }
  }
  // Parses `value` into a temporary, as setting the flag would (the one
  // way this Abseil offers, through the accessor the library itself uses).
  if (!absl::flags_internal::PrivateHandleAccessor::ValidateInputValue(*flag, value)) {
    return Invalid(absl::StrCat("--", name, "=", value, " is not a valid ", TypeName(*flag),
                                flag->IsOfType<bool>()
                                    ? ": give true or false"
                                    : absl::StrCat(" (default ", ShownDefault(*flag), ")")));
  }
  if (const auto it = scan->values.find(name); it != scan->values.end()) {
    return Invalid(
        absl::StrFormat("--%s given twice (%s and %s): give it once", name, it->second, value));
  }
  scan->values.emplace(name, value);
  return absl::OkStatus();
}

// The positional arguments against the names in `usage`.
absl::Status CheckArgs(const Scan& scan, const Usage& usage) {
  const std::vector<std::string> names = absl::StrSplit(usage.args, ' ', absl::SkipEmpty());
  if (scan.args.size() == names.size()) return absl::OkStatus();
  const std::string synopsis =
      absl::StrCat("usage: ", usage.tool, " [flags]", names.empty() ? "" : " ", usage.args);
  if (scan.args.size() < names.size()) {
    return Invalid(absl::StrCat(
        "missing ",
        absl::StrJoin(std::vector<std::string>(names.begin() + scan.args.size(), names.end()),
                      " and "),
        " (", synopsis, ")"));
  }
  const size_t extra = names.size();
  return Invalid(absl::StrCat(
      "unexpected argument '", scan.args[extra], "'", scan.notes[extra],
      names.empty() ? absl::StrCat(": ", usage.tool, " takes flags only (--name=VALUE)")
                    : absl::StrCat(" (", synopsis, ")")));
}

}  // namespace

absl::StatusOr<CommandLine> ParseCommandLineStrict(int argc, char** argv, const Usage& usage) {
  CommandLine line;
  for (int i = 1; i < argc && absl::string_view(argv[i]) != "--"; ++i) {
    if (LooksLikeFlag(argv[i]) && IsHelp(SplitFlag(argv[i]).name)) {
      line.help = true;
      return line;
    }
  }
  Scan scan;
  std::string note;  // for the next positional argument
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") {
      for (++i; i < argc; ++i) scan.args.push_back(argv[i]), scan.notes.push_back("");
      break;
    }
    if (!LooksLikeFlag(arg)) {
      scan.args.push_back(std::string(arg));
      scan.notes.push_back(note);
      note.clear();
      continue;
    }
    if (absl::Status s = CheckFlag(argc, argv, &i, &scan); !s.ok()) return s;
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(SplitFlag(arg).name);
    note = flag != nullptr && flag->IsOfType<bool>() && !SplitFlag(arg).has_value
               ? absl::StrCat(" after ", arg, " (a bool flag takes its value as --", flag->Name(),
                              "=true|false)")
               : "";
  }
  if (absl::Status s = CheckArgs(scan, usage); !s.ok()) return s;
  absl::ParseCommandLine(argc, argv);
  line.args = std::move(scan.args);
  return line;
}

std::string HelpText(const Usage& usage) {
  std::string text = absl::StrCat("usage: ", usage.tool, " [flags]", usage.args.empty() ? "" : " ",
                                  usage.args, "\n\n", usage.description, "\n");
  std::map<std::string, std::vector<const absl::CommandLineFlag*>> by_file;
  for (const auto& [name, flag] : OurFlags()) by_file[flag->Filename()].push_back(flag);
  if (by_file.empty()) absl::StrAppend(&text, "\nflags: none\n");
  for (const auto& [file, flags] : by_file) {
    absl::StrAppend(&text, "\nflags of ", file, ":\n");
    for (const absl::CommandLineFlag* flag : flags) {
      absl::StrAppend(&text, "  --", flag->Name(), " (", TypeName(*flag), ", default ",
                      ShownDefault(*flag), ")\n      ", flag->Help(), "\n");
    }
  }
  return absl::StrCat(text, "\n", kRule);
}

std::vector<std::string> ParseCommandLineOrExit(int argc, char** argv, const Usage& usage) {
  absl::StatusOr<CommandLine> line = ParseCommandLineStrict(argc, argv, usage);
  if (!line.ok()) {
    std::fprintf(stderr, "%s: %s; see %s --help\n", usage.tool.c_str(),
                 std::string(line.status().message()).c_str(), usage.tool.c_str());
    std::exit(2);
  }
  if (line->help) {
    std::fputs(HelpText(usage).c_str(), stdout);
    std::exit(std::fflush(stdout) == 0 ? 0 : 1);
  }
  return std::move(line->args);
}

bool GivenOnCommandLine(const absl::CommandLineFlag& flag) {
  // This Abseil (20220623) keeps CommandLineFlag::IsSpecifiedOnCommandLine
  // private; its accessor is the way the library itself asks.
  return absl::flags_internal::PrivateHandleAccessor::IsSpecifiedOnCommandLine(flag);
}

int ExitStatusFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kAlreadyExists:
      return 2;
    default:
      return 1;
  }
}

int ReportError(const std::string& tool, const absl::Status& status) {
  std::fprintf(stderr, "%s: %s\n", tool.c_str(), std::string(status.message()).c_str());
  return ExitStatusFor(status);
}

int ExitWith(const std::string& tool, const absl::Status& status) {
  return status.ok() ? 0 : ReportError(tool, status);
}

}  // namespace zosched
