#include "base/text_catalog.h"

#include <sys/stat.h>

#include <algorithm>

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

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
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
  if (!IsRegularFile(path)) {
    return absl::NotFoundError(absl::StrFormat(
        "unknown %s '%s'; known %ss: %s; or pass the path of a %s textproto",
        what_, name_or_path, what_, absl::StrJoin(Names(), ", "),
        out->GetDescriptor()->name()));
  }
  *source = path;
  return ReadTextProtoFile(path, out);
}

}  // namespace zosched
