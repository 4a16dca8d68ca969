#include "runtime/data/text_lines.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "base/files.h"
#include "base/status_macros.h"

namespace zosched {
namespace {

constexpr absl::string_view kUtf8ByteOrderMark = "\xEF\xBB\xBF";

// Cuts text fed in pieces into lines and visits them. A line whose bytes so
// far exceed the limit by more than a byte order mark and a "\r" could
// explain is refused at once, before more of it is kept.
class LineSplitter {
 public:
  LineSplitter(const std::string& source, LineVisitor visit) : source_(source), visit_(visit) {}

  absl::Status Feed(absl::string_view chunk) {
    while (!chunk.empty()) {
      const size_t newline = chunk.find('\n');
      const absl::string_view part = chunk.substr(0, newline);
      if (pending_.size() + part.size() >
          kMaxDataLineBytes + kUtf8ByteOrderMark.size() + 1) {
        return TooLong(line_number_ + 1);
      }
      if (newline == absl::string_view::npos) {
        pending_.append(part.data(), part.size());
        return absl::OkStatus();
      }
      if (pending_.empty()) {
        RETURN_IF_ERROR(Visit(part));
      } else {
        pending_.append(part.data(), part.size());
        RETURN_IF_ERROR(Visit(pending_));
        pending_.clear();
      }
      chunk.remove_prefix(newline + 1);
    }
    return absl::OkStatus();
  }

  // Visits the last line if the text did not end in "\n".
  absl::Status Finish() { return pending_.empty() ? absl::OkStatus() : Visit(pending_); }

 private:
  absl::Status Visit(absl::string_view line) {
    ++line_number_;
    if (line_number_ == 1) absl::ConsumePrefix(&line, kUtf8ByteOrderMark);
    absl::ConsumeSuffix(&line, "\r");
    if (static_cast<int64_t>(line.size()) > kMaxDataLineBytes) return TooLong(line_number_);
    return visit_(line_number_, line);
  }

  absl::Status TooLong(int line_number) const {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s:%d: line is longer than %d bytes (%d MiB), the limit for a line of a data file "
        "(a sentence or a record is far shorter): is this the right file, with its line breaks?",
        source_, line_number, kMaxDataLineBytes, kMaxDataLineBytes >> 20));
  }

  const std::string& source_;
  LineVisitor visit_;
  int line_number_ = 0;
  std::string pending_;  // the current line's bytes so far
};

}  // namespace

absl::Status ForEachLine(absl::string_view text, const std::string& source, LineVisitor visit) {
  LineSplitter lines(source, visit);
  RETURN_IF_ERROR(lines.Feed(text));
  return lines.Finish();
}

absl::Status ForEachFileLine(const std::string& path, LineVisitor visit) {
  // Checked before opening: a FIFO would block the open, a device never end.
  RETURN_IF_ERROR(RegularFileBytes(path, "a file").status());
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrFormat("cannot open %s: %s", path, std::strerror(errno)));
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { close(fd); }
  } closer{fd};
  LineSplitter lines(path, visit);
  std::string block(64 << 10, '\0');
  for (;;) {
    const ssize_t n = read(fd, block.data(), block.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::DataLossError(absl::StrFormat("error reading %s: %s", path, std::strerror(errno)));
    }
    if (n == 0) break;
    RETURN_IF_ERROR(lines.Feed(absl::string_view(block.data(), static_cast<size_t>(n))));
  }
  return lines.Finish();
}

}  // namespace zosched
