// A text file compiled into the binary by the `embedded_text_files` Bazel
// macro (tools/build_defs.bzl), so that programs and tests find their data
// without depending on the working directory or runfiles.
#pragma once

namespace zosched {

struct EmbeddedTextFile {
  const char* path;      // workspace-relative, e.g. "models/zoo/opt-125m.pbtxt"
  const char* contents;  // the file's bytes, NUL-terminated
};

}  // namespace zosched
