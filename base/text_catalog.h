// A catalog of textprotos compiled into the binary (embedded_text_files),
// addressed by file stem, that also accepts the path of a user's own file.
// The model zoo and the cluster catalog are both TextCatalogs.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/embedded_text_file.h"
#include "google/protobuf/message.h"

namespace zosched {

class TextCatalog {
 public:
  // `files`: the embedded files (must outlive the catalog); `what` names an
  // entry for error messages ("model", "cluster").
  TextCatalog(const std::vector<EmbeddedTextFile>& files, std::string what);

  // File stems of the entries, sorted ("models/zoo/opt-1.3b.pbtxt" -> "opt-1.3b").
  std::vector<std::string> Names() const;

  // Workspace path of entry `name`, or "" if there is none.
  std::string PathOf(const std::string& name) const;

  // Parses entry `name_or_path` into `*out`, or else the file at that path (a
  // relative path is taken from where the user typed the command, see
  // user_path.h). Sets `*source` to the entry's or file's path.
  //
  // A name that is not an entry is read as a path whenever something exists
  // there, with ReadTextProtoFile's checks: a directory, a FIFO, a device, an
  // empty or an oversized file is refused as such, never read and never
  // called an unknown name.
  //
  // Errors: NotFound "unknown WHAT 'X'; known WHATs: a, b, ...; or pass the
  // path of a MESSAGE textproto" when it is neither an entry nor an existing
  // path (with "(no file at PATH: REASON)" after 'X' when X looks like a path:
  // it has a '/' or a textproto extension, or when stat failed for a reason
  // other than absence); InvalidArgument naming the path when it is a
  // directory, not a regular file, empty or above kMaxReadBytes, and
  // "FILE:LINE:COLUMN: message" for a malformed text.
  absl::Status Load(const std::string& name_or_path,
                    google::protobuf::Message* out, std::string* source) const;

 private:
  const EmbeddedTextFile* Find(const std::string& name) const;

  const std::vector<EmbeddedTextFile>& files_;
  std::string what_;
};

}  // namespace zosched
