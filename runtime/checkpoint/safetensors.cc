#include "runtime/checkpoint/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "models/model_spec.h"
#include "nlohmann/json.hpp"
#include "runtime/checkpoint/checkpoint_files.h"
#include "runtime/checkpoint/checkpoint_names.h"
#include "runtime/checkpoint/content_hash.h"
#include "runtime/checkpoint/non_finite.h"
#include "runtime/dtype/convert.h"

namespace zosched {
namespace {

using Json = nlohmann::json;

constexpr char kMetadataKey[] = "__metadata__";
// Hugging Face's reader refuses headers above 100 MB; so do we, so that a
// corrupt length cannot make us parse gigabytes.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

// Element size of a safetensors dtype name, or 0 if the name is unknown.
int64_t DTypeNameBytes(absl::string_view name) {
  static const std::map<std::string, int64_t, std::less<>> kSizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
      {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
      {"U32", 4},  {"F32", 4}, {"F64", 8}, {"I64", 8},     {"U64", 8}};
  auto it = kSizes.find(name);
  return it == kSizes.end() ? 0 : it->second;
}

DType DTypeOfName(absl::string_view name) {
  if (name == "F32") return FP32;
  if (name == "F16") return FP16;
  if (name == "BF16") return BF16;
  return DTYPE_UNSPECIFIED;
}

const char* NameOfDType(DType dtype) {
  switch (dtype) {
    case FP32:
      return "F32";
    case FP16:
      return "F16";
    case BF16:
      return "BF16";
    default:
      return nullptr;
  }
}

bool SupportedDType(DType dtype) { return NameOfDType(dtype) != nullptr; }

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// Product of `shape`, or -1 on overflow.
int64_t Elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(n, d, &n)) return -1;
  }
  return n;
}

// `j` as JSON text, or just its type for an array or object, whose text
// could nest deeper than the (recursive) serializer can go.
std::string Describe(const Json& j) { return j.is_structured() ? j.type_name() : j.dump(); }

// A JSON number that is a non-negative integer fitting int64_t.
bool GetNonNegative(const Json& j, int64_t* out) {
  if (!j.is_number_integer()) return false;
  if (j.is_number_unsigned()) {
    const uint64_t u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
    *out = static_cast<int64_t>(u);
    return true;
  }
  const int64_t v = j.get<int64_t>();
  if (v < 0) return false;
  *out = v;
  return true;
}

// Parses one tensor entry of the header; `data_bytes` is the size of the data
// buffer in the file.
absl::StatusOr<SafetensorsTensor> ParseEntry(const std::string& path,
                                             const std::string& name,
                                             const Json& entry,
                                             const char* data,
                                             uint64_t data_bytes) {
  const std::string where = absl::StrCat(path, ": tensor '", name, "'");
  if (!entry.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": entry is not a JSON object"));
  }
  SafetensorsTensor t;
  t.name = name;
  auto dtype = entry.find("dtype");
  if (dtype == entry.end() || !dtype->is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": no string \"dtype\""));
  }
  t.dtype_name = dtype->get<std::string>();
  const int64_t element_bytes = DTypeNameBytes(t.dtype_name);
  if (element_bytes == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": unknown dtype \"", t.dtype_name,
        "\" (safetensors dtypes: BOOL, U8, I8, F8_E5M2, F8_E4M3, I16, U16, "
        "F16, BF16, I32, U32, F32, F64, I64, U64)"));
  }
  t.dtype = DTypeOfName(t.dtype_name);
  auto shape = entry.find("shape");
  if (shape == entry.end() || !shape->is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": no \"shape\" array"));
  }
  for (const Json& d : *shape) {
    int64_t dim;
    if (!GetNonNegative(d, &dim)) {
      std::vector<std::string> entries;
      for (const Json& e : *shape) entries.push_back(Describe(e));
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": shape [", absl::StrJoin(entries, ","),
          "] has an entry that is not a non-negative integer"));
    }
    t.shape.push_back(dim);
  }
  auto offsets = entry.find("data_offsets");
  int64_t begin, end;
  if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2 ||
      !GetNonNegative((*offsets)[0], &begin) || !GetNonNegative((*offsets)[1], &end)) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": \"data_offsets\" is not two non-negative integers [begin, end]"));
  }
  if (begin > end) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": data_offsets [", begin, ", ", end, "] end before they begin"));
  }
  if (static_cast<uint64_t>(end) > data_bytes) {
    return absl::DataLossError(absl::StrCat(
        where, ": data_offsets [", begin, ", ", end, "] reach beyond the ",
        data_bytes, "-byte data buffer (truncated file?)"));
  }
  const int64_t elements = Elements(t.shape);
  int64_t expected_bytes;
  const bool overflow =
      elements < 0 || __builtin_mul_overflow(elements, element_bytes, &expected_bytes);
  if (overflow || expected_bytes != end - begin) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": data_offsets [", begin, ", ", end, "] span ", end - begin,
        " bytes but shape ", ShapeString(t.shape), " of ", t.dtype_name, " needs ",
        overflow ? std::string("more than an int64 can count") : absl::StrCat(expected_bytes)));
  }
  t.bytes = absl::string_view(data + begin, end - begin);
  return t;
}

// InvalidArgument naming element `index` of `t` in `path`: its flat index,
// its index in the shape and its value.
absl::Status NonFiniteError(const std::string& path, const SafetensorsTensor& t, int64_t index) {
  float value;
  ConvertBuffer(t.dtype, t.bytes.data() + index * DTypeBytes(t.dtype), FP32, &value, 1);
  std::vector<int64_t> at(t.shape.size());
  for (int64_t d = static_cast<int64_t>(t.shape.size()) - 1, rest = index; d >= 0; --d) {
    at[d] = rest % t.shape[d];
    rest /= t.shape[d];
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: tensor '%s' element %d (%s in shape %s) is %g: weights must be finite numbers; the "
      "file holds a diverged or corrupted model",
      path, t.name, index, ShapeString(at), ShapeString(t.shape), value));
}

// NotFound for parameter `name` of `spec`, which `checkpoint` does not hold
// (nor, when `tied_to` is set, the embedding tied to it).
absl::Status MissingError(const CheckpointFiles& checkpoint, const ModelSpec& spec,
                          const std::string& name, const std::string& tied_to) {
  std::string looked;
  if (const std::vector<std::string> names = StoredNames(spec.family(), name); names.size() > 1) {
    looked = absl::StrCat(" (nor as '", names[1], "')");
  }
  std::string hint;
  const int64_t layer = StoredLayer(spec, name);
  if (layer >= 0) {
    int64_t last = -1;
    for (const SafetensorsTensor* t : checkpoint.tensors()) {
      last = std::max(last, StoredLayer(spec, t->name));
    }
    if (last >= 0 && last < layer) {
      hint = absl::StrCat(": it holds blocks up to ", last, " only, and '", spec.name(), "' has ",
                          spec.num_layers(), " (0-", spec.num_layers() - 1,
                          "), so it is probably of a smaller model of the family (a different "
                          "size)");
    }
  }
  return absl::NotFoundError(absl::StrCat(
      checkpoint.path(), ": tensor '", name, "' not found", looked,
      tied_to.empty() ? "" : absl::StrCat(" (nor its tied '", tied_to, "')"),
      "; the checkpoint holds ", checkpoint.tensors().size(), " tensors", hint));
}

// Finds each of `tensors` in `checkpoint` (as LoadModelParameters
// describes), checks its shape and dtype, that the checkpoint holds no
// tensor of another model, then that every value is finite and, when `out`
// is not null, converts it to `to` into `out`. Checking and converting go
// block by block, so the file's bytes are read once.
absl::Status ReadParameters(const CheckpointFiles& checkpoint, const ModelSpec& spec,
                            const std::vector<TensorSpec>& tensors, DType to, void* out) {
  std::vector<const SafetensorsTensor*> found;
  for (const TensorSpec& want : tensors) {
    std::string tied_to;
    const SafetensorsTensor* t = FindParameter(checkpoint, spec, want.name, &tied_to);
    if (t == nullptr) {
      // A tied head was looked for as the token embedding too.
      return MissingError(checkpoint, spec, want.name,
                          want.name == kLmHeadName && spec.tied_lm_head()
                              ? EmbeddingTensors(spec).front().name
                              : "");
    }
    const std::string where = absl::StrCat(
        checkpoint.PathOf(*t), ": tensor '", want.name, "'",
        t->name == want.name || !tied_to.empty() ? ""
                                                 : absl::StrCat(" (stored as '", t->name, "')"));
    if (t->shape != want.shape) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": shape ", ShapeString(want.shape), " expected, found ",
          ShapeString(t->shape), tied_to.empty() ? "" : absl::StrCat(" (in '", t->name, "')")));
    }
    if (!SupportedDType(t->dtype)) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": dtype ", t->dtype_name, " cannot be loaded as parameters (F32, F16 or BF16)"));
    }
    found.push_back(t);
  }
  RETURN_IF_ERROR(CheckNoForeignTensors(checkpoint, spec));
  auto* dst = static_cast<unsigned char*>(out);
  const int64_t to_bytes = out == nullptr ? 0 : DTypeBytes(to);
  for (const SafetensorsTensor* t : found) {
    const int64_t n = Elements(t->shape);
    const int64_t from_bytes = DTypeBytes(t->dtype);
    constexpr int64_t kBlock = 1 << 16;  // elements: the block stays in cache to be converted
    for (int64_t begin = 0; begin < n; begin += kBlock) {
      const int64_t count = std::min(kBlock, n - begin);
      const char* src = t->bytes.data() + begin * from_bytes;
      if (const int64_t bad = FirstNonFinite(t->dtype, src, count); bad >= 0) {
        return NonFiniteError(checkpoint.PathOf(*t), *t, begin + bad);
      }
      if (out != nullptr) ConvertBuffer(t->dtype, src, to, dst + begin * to_bytes, count);
    }
    dst += n * to_bytes;
  }
  return absl::OkStatus();
}

}  // namespace

SafetensorsFile::SafetensorsFile(SafetensorsFile&& other) noexcept {
  *this = std::move(other);
}

SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&& other) noexcept {
  if (this != &other) {
    if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
    path_ = std::move(other.path_);
    mapping_ = other.mapping_;
    mapping_bytes_ = other.mapping_bytes_;
    tensors_ = std::move(other.tensors_);
    metadata_ = std::move(other.metadata_);
    other.mapping_ = nullptr;
    other.mapping_bytes_ = 0;
    other.tensors_.clear();
  }
  return *this;
}

SafetensorsFile::~SafetensorsFile() {
  if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
}

const SafetensorsTensor* SafetensorsFile::Find(absl::string_view name) const {
  auto it = std::lower_bound(
      tensors_.begin(), tensors_.end(), name,
      [](const SafetensorsTensor& t, absl::string_view n) { return t.name < n; });
  return it != tensors_.end() && it->name == name ? &*it : nullptr;
}

absl::StatusOr<SafetensorsFile> ReadSafetensors(const std::string& path) {
  SafetensorsFile file;
  file.path_ = path;
  // A directory, a device or a FIFO is refused before it is opened.
  RETURN_IF_ERROR(RegularFileBytes(path, "a .safetensors file").status());
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot open"));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int error = errno;
    close(fd);
    return absl::ErrnoToStatus(error, absl::StrCat(path, ": cannot stat"));
  }
  const uint64_t file_bytes = static_cast<uint64_t>(st.st_size);
  if (file_bytes < 8) {
    close(fd);
    return absl::DataLossError(absl::StrCat(
        path, ": ", file_bytes, " bytes, shorter than the 8-byte header length (truncated file?)"));
  }
  void* mapping = mmap(nullptr, file_bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_error = errno;
  close(fd);
  if (mapping == MAP_FAILED) {
    return absl::ErrnoToStatus(map_error, absl::StrCat(path, ": cannot mmap"));
  }
  file.mapping_ = mapping;
  file.mapping_bytes_ = file_bytes;
  const auto* base = static_cast<const unsigned char*>(mapping);

  uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = (header_bytes << 8) | base[i];
  if (header_bytes > file_bytes - 8) {
    return absl::DataLossError(absl::StrCat(
        path, ": header length ", header_bytes, " exceeds the ", file_bytes - 8,
        " bytes after it (truncated file, or not a safetensors file?)"));
  }
  if (header_bytes > kMaxHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": header length ", header_bytes, " exceeds the limit of ", kMaxHeaderBytes));
  }
  const char* header = reinterpret_cast<const char*>(base + 8);
  const char* data = header + header_bytes;
  const uint64_t data_bytes = file_bytes - 8 - header_bytes;

  Json json;
  try {
    json = Json::parse(header, header + header_bytes);
  } catch (const Json::exception& e) {  // parse_error; out_of_range for a number like 1e999
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": header is not valid JSON: ", e.what()));
  }
  if (!json.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": header is JSON but not an object: ", json.type_name()));
  }
  for (auto it = json.begin(); it != json.end(); ++it) {
    if (it.key() == kMetadataKey) {
      if (!it->is_object()) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": \"__metadata__\" is not a JSON object"));
      }
      for (auto m = it->begin(); m != it->end(); ++m) {
        if (!m->is_string()) {
          return absl::InvalidArgumentError(absl::StrCat(
              path, ": \"__metadata__\" value of '", m.key(), "' is not a string"));
        }
        file.metadata_[m.key()] = m->get<std::string>();
      }
      continue;
    }
    ASSIGN_OR_RETURN(SafetensorsTensor t,
                     ParseEntry(path, it.key(), *it, data, data_bytes));
    file.tensors_.push_back(std::move(t));
  }
  // No two tensors may share bytes: a writer's bug, or a crafted file whose
  // tensors would alias each other when loaded.
  std::vector<const SafetensorsTensor*> by_offset;
  for (const SafetensorsTensor& t : file.tensors_) {
    if (!t.bytes.empty()) by_offset.push_back(&t);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const SafetensorsTensor* a, const SafetensorsTensor* b) {
              return a->bytes.data() < b->bytes.data();
            });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const SafetensorsTensor& a = *by_offset[i - 1];
    const SafetensorsTensor& b = *by_offset[i];
    if (b.bytes.data() < a.bytes.data() + a.bytes.size()) {
      const int64_t a_begin = a.bytes.data() - data, b_begin = b.bytes.data() - data;
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": tensors '", a.name, "' (data_offsets [", a_begin, ", ",
          a_begin + a.bytes.size(), "]) and '", b.name, "' (data_offsets [", b_begin, ", ",
          b_begin + b.bytes.size(), "]) overlap; each tensor has bytes of its own"));
    }
  }
  // nlohmann's object is a std::map: keys come sorted already; keep the
  // invariant explicit for Find().
  std::sort(file.tensors_.begin(), file.tensors_.end(),
            [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
              return a.name < b.name;
            });
  return file;
}

absl::Status WriteSafetensors(const std::string& path,
                              const std::vector<SafetensorsTensor>& tensors,
                              const std::map<std::string, std::string>& metadata) {
  Json header = Json::object();
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const SafetensorsTensor& t : tensors) {
    const std::string where = absl::StrCat(path, ": tensor '", t.name, "'");
    if (t.name.empty() || t.name == kMetadataKey) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": reserved or empty name"));
    }
    if (!names.insert(t.name).second) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": duplicate name"));
    }
    std::string dtype_name = t.dtype_name;
    if (dtype_name.empty()) {
      if (!SupportedDType(t.dtype)) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": no dtype name and dtype ", DType_Name(t.dtype), " is not FP32/FP16/BF16"));
      }
      dtype_name = NameOfDType(t.dtype);
    }
    const int64_t element_bytes = DTypeNameBytes(dtype_name);
    if (element_bytes == 0) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": unknown dtype \"", dtype_name, "\""));
    }
    const int64_t elements = Elements(t.shape);
    bool negative = false;
    for (int64_t d : t.shape) negative |= d < 0;
    if (negative || elements < 0 ||
        static_cast<uint64_t>(elements) * element_bytes != t.bytes.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": ", t.bytes.size(), " bytes of data for shape ", ShapeString(t.shape),
          " of ", dtype_name));
    }
    header[t.name] = {{"dtype", dtype_name},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  if (!metadata.empty()) header[kMetadataKey] = metadata;
  std::string header_text = header.dump();
  header_text.append((8 - header_text.size() % 8) % 8, ' ');

  const std::string tmp = path + ".tmp";
  FILE* f = fopen(tmp.c_str(), "wb");
  if (f == nullptr) return absl::ErrnoToStatus(errno, absl::StrCat(tmp, ": cannot create"));
  int error = 0;  // the first failure's errno
  auto put = [&](const void* bytes, size_t n) {
    errno = 0;
    if (error == 0 && n > 0 && fwrite(bytes, 1, n, f) != n) error = errno != 0 ? errno : EIO;
  };
  unsigned char length[8];
  for (int i = 0; i < 8; ++i) {
    length[i] = static_cast<unsigned char>(static_cast<uint64_t>(header_text.size()) >> (8 * i));
  }
  put(length, 8);
  put(header_text.data(), header_text.size());
  for (const SafetensorsTensor& t : tensors) put(t.bytes.data(), t.bytes.size());
  // On disk before the rename, so the name never points at a file a power
  // loss could leave half-written.
  errno = 0;
  if (error == 0 && (fflush(f) != 0 || fsync(fileno(f)) != 0)) error = errno != 0 ? errno : EIO;
  errno = 0;
  if (fclose(f) != 0 && error == 0) error = errno != 0 ? errno : EIO;
  if (error != 0) {
    unlink(tmp.c_str());
    return absl::ErrnoToStatus(error, absl::StrCat(tmp, ": write failed"));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    unlink(tmp.c_str());
    return absl::ErrnoToStatus(error, absl::StrCat("cannot rename ", tmp, " to ", path));
  }
  return SyncParentDirectory(path);
}

absl::Status CheckModelParameters(const CheckpointFiles& checkpoint, const ModelSpec& spec,
                                  const std::vector<TensorSpec>& tensors) {
  return ReadParameters(checkpoint, spec, tensors, DTYPE_UNSPECIFIED, nullptr);
}

absl::Status LoadModelParameters(const std::string& path, const ModelSpec& spec,
                                 const std::vector<TensorSpec>& tensors,
                                 DType to, void* out) {
  if (!SupportedDType(to)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": cannot load parameters as ", DType_Name(to), " (FP32, FP16 or BF16)"));
  }
  ASSIGN_OR_RETURN(const CheckpointFiles checkpoint, CheckpointFiles::Open(path));
  return ReadParameters(checkpoint, spec, tensors, to, out);
}

absl::Status SaveModelParameters(const std::string& path, const ModelSpec& spec,
                                 const std::vector<ParameterPart>& parts,
                                 const std::map<std::string, std::string>& metadata) {
  std::vector<SafetensorsTensor> out;
  for (size_t p = 0; p < parts.size(); ++p) {
    const ParameterPart& part = parts[p];
    if (!SupportedDType(part.dtype)) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": part ", p, ": dtype ", DType_Name(part.dtype), " is not FP32/FP16/BF16"));
    }
    const int64_t total = CountElements(part.tensors);
    if (part.data == nullptr && total > 0) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": part ", p, ": null data"));
    }
    const char* data = static_cast<const char*>(part.data);
    const int64_t element_bytes = DTypeBytes(part.dtype);
    for (const TensorSpec& t : part.tensors) {
      const int64_t bytes = t.elements() * element_bytes;
      if (spec.tied_lm_head() && t.name == kLmHeadName) {  // the token embedding's copy
        data += bytes;
        continue;
      }
      SafetensorsTensor st;
      st.name = t.name;
      st.dtype = part.dtype;
      st.dtype_name = NameOfDType(part.dtype);
      st.shape = t.shape;
      st.bytes = absl::string_view(data, bytes);
      data += bytes;
      out.push_back(std::move(st));
    }
  }
  std::map<std::string, std::string> all = metadata;
  all["format"] = "pt";
  all.emplace("zosched.model", spec.name());
  all[kContentHashKey] = ContentHash(out);
  return WriteSafetensors(path, out, all);
}

}  // namespace zosched
