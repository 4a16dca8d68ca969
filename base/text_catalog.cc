#include "base/text_catalog.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "base/textproto.h"
#include "base/user_path.h"

namespace zosched {
namespace {

// "models/zoo/opt-1.3b.pbtxt" -> "opt-1.3b".
std::string StemOf(const std::string& path) {
  std::string stem = path.substr(path.rfind('/') + 1);
  return stem.substr(0, stem.rfind('.'));
}

// Whether a name the user typed is meant as a file's path rather than an
// entry's name: entry names are bare stems, without '/' or an extension.
bool LooksLikePath(const std::string& name) {
  return name.find('/') != std::string::npos ||
         absl::EndsWith(name, ".pbtxt") || absl::EndsWith(name, ".textproto") ||
         absl::EndsWith(name, ".txtpb");
}

}  // namespace

TextCatalog::TextCatalog(const std::vector<EmbeddedTextFile>& files,
                         std::string what)
    : files_(files), what_(std::move(what)) {}

const EmbeddedTextFile* TextCatalog::Find(const std::string& name) const {
  for (const EmbeddedTextFile& file : files_) {
    if (StemOf(file.path) == name) return &file;
  }
  return nullptr;
}

std::vector<std::string> TextCatalog::Names() const {
  std::vector<std::string> names;
  for (const EmbeddedTextFile& file : files_) names.push_back(StemOf(file.path));
  std::sort(names.begin(), names.end());
  return names;
}

std::string TextCatalog::PathOf(const std::string& name) const {
  const EmbeddedTextFile* file = Find(name);
  return file == nullptr ? "" : file->path;
}

absl::Status TextCatalog::Load(const std::string& name_or_path,
                               google::protobuf::Message* out,
                               std::string* source) const {
  if (const EmbeddedTextFile* file = Find(name_or_path)) {
    *source = file->path;
    return ParseTextProto(file->contents, file->path, out);
  }
  const std::string path = ResolveUserPath(name_or_path);
  struct stat info;
  if (stat(path.c_str(), &info) == 0) {
    // Something is there: the file reader says what is wrong with it when it
    // is not a readable, non-empty regular file (a directory, a FIFO, a
    // device), rather than calling it an unknown name.
    *source = path;
    return ReadTextProtoFile(path, out);
  }
  const int error = errno;
  const std::string no_file =
      LooksLikePath(name_or_path) || error != ENOENT
          ? absl::StrFormat(" (no file at %s: %s)", path, std::strerror(error))
          : "";
  return absl::NotFoundError(absl::StrFormat(
      "unknown %s '%s'%s; known %ss: %s; or pass the path of a %s textproto",
      what_, name_or_path, no_file, what_, absl::StrJoin(Names(), ", "),
      out->GetDescriptor()->name()));
}

}  // namespace zosched
