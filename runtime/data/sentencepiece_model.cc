#include "runtime/data/sentencepiece_model.h"

#include <dlfcn.h>
#include <sentencepiece_processor.h>

#include <cstdint>
#include <new>

namespace zosched {
namespace {

// libsentencepiece is opened at run time, not linked. Debian builds it with
// its own copies of protobuf (3.14) and of some Abseil flags (FLAGS_help,
// FLAGS_version) inside, exported; every zosched binary links the system's
// protobuf (3.21) and Abseil's flags, which define many of the same
// symbols. Linked or opened plainly, the library's references bind to the
// process's definitions (protobuf's version check throws; its FLAGS_help
// flag object is built over Abseil's one-byte bool, and exit crashes).
// Opened with RTLD_DEEPBIND, it resolves its own symbols first and keeps to
// its copies. AddressSanitizer and ThreadSanitizer refuse RTLD_DEEPBIND, so
// such builds cannot read a SentencePiece model (Load says so).
//
// So that nothing here needs the library at link time, this file calls
// only the processor's virtual methods (through its vtable; BUILD turns
// devirtualization off) and, through dlsym, its constructor,
// LoadFromSerializedProto, and util::Status's ToString and destructor.
// util::Status is one pointer (null when ok) and not trivially
// destructible, so StatusBlob, which is too, is returned the same way
// (through a hidden pointer).
struct StatusBlob {
  void* rep = nullptr;
  ~StatusBlob() {}  // user-provided: returned like util::Status
};

struct Library {
  std::string error;  // why it could not be opened
  void (*construct)(void* self) = nullptr;
  StatusBlob (*load)(void* self, std::string_view serialized) = nullptr;
  std::string (*status_text)(const StatusBlob* status) = nullptr;
  void (*destroy_status)(StatusBlob* status) = nullptr;
};

const Library& OpenLibrary() {
  static const Library* const library = [] {
    auto* lib = new Library();
    if (!SentencePieceModel::Available()) {
      lib->error =
          "this build (AddressSanitizer or ThreadSanitizer) cannot open libsentencepiece: it "
          "must be opened with RTLD_DEEPBIND, apart from the protobuf and Abseil this process "
          "links, which the sanitizers do not allow";
      return lib;
    }
    void* handle = dlopen("libsentencepiece.so.0", RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (handle == nullptr) {
      const char* why = dlerror();
      lib->error = std::string("cannot open libsentencepiece.so.0 (Debian: libsentencepiece0): ") +
                   (why == nullptr ? "" : why);
      return lib;
    }
    const auto find = [&](const char* symbol) {
      void* address = dlsym(handle, symbol);
      if (address == nullptr && lib->error.empty()) {
        lib->error = std::string("libsentencepiece.so.0 has no ") + symbol;
      }
      return address;
    };
    lib->construct = reinterpret_cast<void (*)(void*)>(
        find("_ZN13sentencepiece22SentencePieceProcessorC1Ev"));
    lib->load = reinterpret_cast<StatusBlob (*)(void*, std::string_view)>(
        find("_ZN13sentencepiece22SentencePieceProcessor23LoadFromSerializedProtoESt17basic_"
             "string_viewIcSt11char_traitsIcEE"));
    lib->status_text = reinterpret_cast<std::string (*)(const StatusBlob*)>(
        find("_ZNK13sentencepiece4util6Status8ToStringB5cxx11Ev"));
    lib->destroy_status =
        reinterpret_cast<void (*)(StatusBlob*)>(find("_ZN13sentencepiece4util6StatusD1Ev"));
    return lib;
  }();
  return *library;
}

// The protobuf wire format, as far as editing one bool of a ModelProto
// needs: ModelProto field 3 is normalizer_spec (a NormalizerSpec), whose
// field 3 is add_dummy_prefix and field 4 remove_extra_whitespaces (both
// bools, default true; sentencepiece_model.proto).
constexpr uint32_t kNormalizerSpecField = 3;
constexpr uint32_t kAddDummyPrefixField = 3;
constexpr uint32_t kRemoveExtraWhitespacesField = 4;
constexpr int kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;

struct Field {
  uint32_t number = 0;
  int wire_type = 0;
  std::string_view whole;    // tag and value, as serialized
  std::string_view payload;  // a length-delimited field's bytes
  uint64_t varint = 0;       // a varint field's value
};

bool ReadVarint(std::string_view s, size_t* pos, uint64_t* value) {
  *value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*pos >= s.size()) return false;
    const uint8_t byte = static_cast<uint8_t>(s[(*pos)++]);
    *value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

void WriteVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>(0x80 | (value & 0x7f)));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

// Splits a serialized message into its fields; false if it is not one.
bool ReadFields(std::string_view message, std::vector<Field>* fields) {
  size_t pos = 0;
  while (pos < message.size()) {
    const size_t start = pos;
    uint64_t tag = 0;
    if (!ReadVarint(message, &pos, &tag) || (tag >> 3) == 0 || (tag >> 3) > UINT32_MAX) {
      return false;
    }
    Field field;
    field.number = static_cast<uint32_t>(tag >> 3);
    field.wire_type = static_cast<int>(tag & 7);
    switch (field.wire_type) {
      case kVarint:
        if (!ReadVarint(message, &pos, &field.varint)) return false;
        break;
      case kFixed64:
      case kFixed32: {
        const size_t size = field.wire_type == kFixed64 ? 8 : 4;
        if (message.size() - pos < size) return false;
        pos += size;
        break;
      }
      case kLengthDelimited: {
        uint64_t size = 0;
        if (!ReadVarint(message, &pos, &size) || size > message.size() - pos) return false;
        field.payload = message.substr(pos, size);
        pos += size;
        break;
      }
      default:  // groups (deprecated, and not in a ModelProto)
        return false;
    }
    field.whole = message.substr(start, pos - start);
    fields->push_back(field);
  }
  return true;
}

constexpr const char* kNotAModel = "not a SentencePiece model (the protobuf cannot be read)";

}  // namespace

SentencePieceModel::SentencePieceModel() = default;

bool SentencePieceModel::Available() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return false;
#else
  return true;
#endif
}

SentencePieceModel::~SentencePieceModel() = default;

bool SentencePieceModel::ReadSpaces(const std::string& serialized, Spaces* spaces,
                                    std::string* error) {
  *spaces = Spaces();
  std::vector<Field> fields;
  if (!ReadFields(serialized, &fields)) {
    *error = kNotAModel;
    return false;
  }
  for (const Field& field : fields) {
    if (field.number != kNormalizerSpecField) continue;
    std::vector<Field> spec;
    if (field.wire_type != kLengthDelimited || !ReadFields(field.payload, &spec)) {
      *error = kNotAModel;
      return false;
    }
    for (const Field& f : spec) {
      if (f.wire_type != kVarint) continue;
      if (f.number == kAddDummyPrefixField) spaces->add_dummy_prefix = f.varint != 0;
      if (f.number == kRemoveExtraWhitespacesField) spaces->remove_extra_whitespaces = f.varint != 0;
    }
  }
  return true;
}

std::unique_ptr<SentencePieceModel> SentencePieceModel::Load(const std::string& serialized,
                                                             bool dummy_prefix,
                                                             std::string* error) {
  std::string edited;
  if (!dummy_prefix) {
    // The same message with add_dummy_prefix false appended to each
    // normalizer_spec (the last value of a field wins).
    std::vector<Field> fields;
    if (!ReadFields(serialized, &fields)) {
      *error = kNotAModel;
      return nullptr;
    }
    for (const Field& field : fields) {
      if (field.number != kNormalizerSpecField || field.wire_type != kLengthDelimited) {
        edited.append(field.whole);
        continue;
      }
      std::string spec(field.payload);
      WriteVarint(kAddDummyPrefixField << 3 | kVarint, &spec);
      WriteVarint(0, &spec);
      WriteVarint(kNormalizerSpecField << 3 | kLengthDelimited, &edited);
      WriteVarint(spec.size(), &edited);
      edited += spec;
    }
  }
  const Library& library = OpenLibrary();
  if (!library.error.empty()) {
    *error = library.error;
    return nullptr;
  }
  std::unique_ptr<SentencePieceModel> model(new SentencePieceModel());
  void* memory = ::operator new(sizeof(sentencepiece::SentencePieceProcessor));
  library.construct(memory);
  // Deleted through its virtual destructor.
  model->processor_.reset(static_cast<sentencepiece::SentencePieceProcessor*>(memory));
  StatusBlob status = library.load(memory, dummy_prefix ? serialized : edited);
  if (status.rep != nullptr) {
    *error = "not a SentencePiece model: " + library.status_text(&status);
    library.destroy_status(&status);
    return nullptr;
  }
  return model;
}

std::vector<int> SentencePieceModel::Encode(std::string_view text) const {
  return processor_->EncodeAsIds(text);
}

std::string SentencePieceModel::Decode(const std::vector<int>& ids) const {
  return processor_->DecodeIds(ids);
}

int SentencePieceModel::PieceId(std::string_view piece) const {
  // PieceToId gives the unknown piece's id for a piece it does not know.
  const int id = processor_->PieceToId(piece);
  return id >= 0 && processor_->IdToPiece(id) == piece ? id : -1;
}

int SentencePieceModel::size() const { return processor_->GetPieceSize(); }

std::string SentencePieceModel::BosPiece() const {
  const int bos = processor_->bos_id();
  return bos >= 0 && bos < size() ? processor_->IdToPiece(bos) : std::string();
}

}  // namespace zosched
