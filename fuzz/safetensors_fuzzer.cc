// libFuzzer target: any bytes as a safetensors file, opened by
// ReadSafetensors (runtime/checkpoint/safetensors.h) through a memfd, so no
// disk is touched. A file that opens must keep the reader's promises: every
// tensor's bytes are readable, lie within the data buffer, overlap no other
// tensor's, and match the shape (for the dtypes it maps); tensors come
// sorted and Find() finds each.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "models/model_spec.h"
#include "runtime/checkpoint/safetensors.h"

namespace zosched {
namespace {

// A memory-backed file holding the current input, and a path that opens it.
class MemoryFile {
 public:
  MemoryFile() : fd_(memfd_create("safetensors_fuzzer", MFD_CLOEXEC)) {
    CHECK(fd_ >= 0) << "memfd_create failed";
    path_ = absl::StrCat("/proc/self/fd/", fd_);
  }

  // Replaces the file's contents with `bytes`; returns the path.
  const std::string& Hold(const uint8_t* bytes, size_t size) {
    CHECK(ftruncate(fd_, 0) == 0);
    size_t done = 0;
    while (done < size) {
      const ssize_t n = pwrite(fd_, bytes + done, size - done, static_cast<off_t>(done));
      CHECK(n > 0) << "pwrite to the memfd failed";
      done += static_cast<size_t>(n);
    }
    return path_;
  }

 private:
  int fd_;
  std::string path_;
};

// Every tensor byte is read into this, so the reads cannot be optimised away.
volatile uint8_t bytes_read_sink;

// `bytes`: the file's `size` bytes.
void CheckFile(const SafetensorsFile& file, const uint8_t* bytes, size_t size) {
  CHECK(size >= 8) << "opened a file shorter than its header length";
  uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = header_bytes << 8 | bytes[i];
  CHECK(header_bytes <= size - 8) << "opened a file whose header reaches beyond it";
  const std::vector<SafetensorsTensor>& tensors = file.tensors();
  std::vector<absl::string_view> spans;
  uint8_t checksum = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const SafetensorsTensor& t = tensors[i];
    CHECK(i == 0 || tensors[i - 1].name < t.name) << "tensors not sorted by name";
    CHECK(file.Find(t.name) == &t) << "Find('" << t.name << "') misses it";
    int64_t elements = 1;
    for (int64_t d : t.shape) {
      CHECK(d >= 0 && !__builtin_mul_overflow(elements, d, &elements)) << t.name;
    }
    if (t.dtype != DTYPE_UNSPECIFIED) {
      CHECK(static_cast<uint64_t>(elements) * DTypeBytes(t.dtype) == t.bytes.size()) << t.name;
    }
    for (char c : t.bytes) checksum ^= static_cast<uint8_t>(c);
    if (!t.bytes.empty()) spans.push_back(t.bytes);
  }
  // Disjoint, and together within the bytes after the 8-byte length.
  std::sort(spans.begin(), spans.end(), [](absl::string_view a, absl::string_view b) {
    return a.data() < b.data();
  });
  for (size_t i = 1; i < spans.size(); ++i) {
    CHECK(spans[i - 1].data() + spans[i - 1].size() <= spans[i].data()) << "tensors overlap";
  }
  if (!spans.empty()) {
    const size_t extent = spans.back().data() + spans.back().size() - spans.front().data();
    CHECK(extent <= size - 8 - header_bytes) << "tensors reach beyond the file";
  }
  for (const auto& [key, value] : file.metadata()) checksum ^= key.size() ^ value.size();
  bytes_read_sink = checksum;
}

}  // namespace
}  // namespace zosched

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static auto* memory_file = new zosched::MemoryFile();
  absl::StatusOr<zosched::SafetensorsFile> file =
      zosched::ReadSafetensors(memory_file->Hold(data, size));
  if (file.ok()) zosched::CheckFile(*file, data, size);
  return 0;
}
