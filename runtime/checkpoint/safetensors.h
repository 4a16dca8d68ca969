// Hugging Face safetensors files: reading, writing, and loading/saving a
// model's parameters by their checkpoint names (models/model_tensors.h),
// loading from one file or a sharded checkpoint (checkpoint_files.h) with
// each family's spellings of the names (checkpoint_names.h).
//
// On-disk format (https://github.com/huggingface/safetensors):
//   8 bytes   N, little-endian uint64: length of the header
//   N bytes   JSON object, UTF-8, possibly padded with trailing spaces:
//               {"NAME": {"dtype": "F16", "shape": [d0, d1, ...],
//                         "data_offsets": [BEGIN, END]}, ...,
//                "__metadata__": {"KEY": "VALUE", ...}}      (optional)
//   rest      the data buffer; a tensor's bytes are [BEGIN, END) within it,
//             row-major, little-endian.
//
// This reader accepts every dtype name of the format (BOOL, U8, I8, F8_E5M2,
// F8_E4M3, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64) so that files
// carrying non-float buffers still open; only F32, F16 and BF16 map to a
// DType and can be loaded as parameters.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "models/model.pb.h"
#include "models/model_tensors.h"

namespace zosched {

// One tensor of a safetensors file (read) or to write.
struct SafetensorsTensor {
  std::string name;
  // The file's dtype name, e.g. "F16". When writing it may be left empty and
  // is then derived from `dtype`.
  std::string dtype_name;
  // FP32, FP16 or BF16; DTYPE_UNSPECIFIED for other dtype names.
  DType dtype = DTYPE_UNSPECIFIED;
  std::vector<int64_t> shape;
  // The row-major little-endian data: elements(shape) * element size bytes.
  // Read: a view into the file's mapping (valid while its SafetensorsFile
  // lives). Write: a view of the caller's memory.
  absl::string_view bytes;
};

// An open safetensors file, memory-mapped read-only. Move-only; tensor views
// stay valid until the object is destroyed.
class SafetensorsFile {
 public:
  SafetensorsFile(SafetensorsFile&& other) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&& other) noexcept;
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;
  ~SafetensorsFile();

  const std::string& path() const { return path_; }
  // Every tensor of the header, ordered by name.
  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
  // The tensor called `name`, or nullptr.
  const SafetensorsTensor* Find(absl::string_view name) const;
  // The header's "__metadata__" (empty if absent).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  friend absl::StatusOr<SafetensorsFile> ReadSafetensors(const std::string& path);
  SafetensorsFile() = default;

  std::string path_;
  void* mapping_ = nullptr;
  size_t mapping_bytes_ = 0;
  std::vector<SafetensorsTensor> tensors_;
  std::map<std::string, std::string> metadata_;
};

// Opens and validates the safetensors file at `path` (mmap; nothing of the
// data buffer is read until used).
//
// Errors, each message naming `path` and, where one is at fault, the tensor:
//   NotFound: no such file (base/files.h RegularFileBytes);
//   InvalidArgument "PATH is a directory; expected a .safetensors file", or
//     "PATH is not a regular file (a character device); ..." (a device, a
//     FIFO, a socket), refused before it is opened;
//   PermissionDenied/...: the file cannot be opened (errno's code);
//   DataLoss: shorter than 8 bytes, header length beyond the file, a
//     tensor's data_offsets beyond the data buffer (a truncated file);
//   InvalidArgument: header not valid JSON (with the parser's message), not
//     an object, a tensor entry without a string dtype / integer shape /
//     two data_offsets, an unknown dtype name, data_offsets not matching the
//     shape's size, a non-string metadata value.
absl::StatusOr<SafetensorsFile> ReadSafetensors(const std::string& path);

// Writes `tensors` (names unique, none "__metadata__"; each with `bytes` of
// exactly elements * element size) and `metadata` to `path` as safetensors:
// the header padded with spaces to a multiple of 8 bytes (as Hugging Face's
// writer does), data in the order given. Writes `path`.tmp then renames it,
// so `path` is never left half-written.
//
// Errors: InvalidArgument for a bad tensor (naming it); the errno's code
// (naming the path) when the file cannot be written.
absl::Status WriteSafetensors(const std::string& path,
                              const std::vector<SafetensorsTensor>& tensors,
                              const std::map<std::string, std::string>& metadata);

// Fills `out` with the parameters `tensors` of a model `spec` read from the
// checkpoint at `path`: a safetensors file, a Hugging Face checkpoint
// directory, or a sharded checkpoint's index (CheckpointFiles::Open in
// checkpoint_files.h; each file opened once). `out` receives the tensors
// concatenated in the given order, each row-major, converted to `to` (FP32,
// FP16 or BF16; see runtime/dtype/convert.h), so it must hold
// CountElements(tensors) * DTypeBytes(to) bytes.
//
// Tensors are found by their Hugging Face names (TensorSpec::name) under
// either spelling of the family's base-model prefix ("model.layers.0.…" or
// "layers.0.…"; GPT-2's "h.0.…" or "transformer.h.0.…"; see
// checkpoint_names.h). A requested "lm_head.weight" absent from the file is
// the token embedding when `spec` ties the head to it. Tensors of the
// checkpoint that are not requested are ignored, except a parameter of a
// model of the family that `spec` lacks: a bigger model's block, another
// variant's tensor (CheckNoForeignTensors); GPT-2's attention masks, rotary
// inv_freq buffers, the copy of a tied head and adapter tensors (a LoRA or
// prefix run's checkpoint: ".lora_A.weight", ".lora_B.weight",
// ".prefix_keys", ".prefix_values", loaded when requested) are not
// parameters of the base model.
//
// The checks go in this order, so that the first mismatch of the model is
// the one named: every requested tensor (in the given order) present, of
// the TensorSpec's shape and of dtype F32, F16 or BF16; no tensor of another
// model; then the values, each checked to be finite while it is converted
// (one pass over the file's bytes): NaN or ±Inf weights would make every
// loss after them NaN, so they are refused here, not discovered steps later.
//
// Errors (messages name the file and the tensor, and the name it is stored
// under when that differs): those of CheckpointFiles::Open; NotFound: a
// tensor missing (with a hint when the checkpoint lacks its whole block:
// probably a smaller model); InvalidArgument: a shape other than the
// TensorSpec's (expected and found both shown), a dtype that is not
// F32/F16/BF16, `to` not one of FP32/FP16/BF16, a tensor of another model
// (CheckNoForeignTensors), a NaN or ±Inf value (the first one: its element
// index, flat and in the shape, and the value). `out` may be partly written
// when an error is returned.
absl::Status LoadModelParameters(const std::string& path, const ModelSpec& spec,
                                 const std::vector<TensorSpec>& tensors,
                                 DType to, void* out);

class CheckpointFiles;  // checkpoint_files.h

// Checks everything LoadModelParameters checks about `tensors` of `spec` in
// the open `checkpoint` (present, shape, dtype, no tensor of another model,
// every value finite) without converting anything: one read of those
// tensors' bytes. Errors: those of LoadModelParameters after it is open.
absl::Status CheckModelParameters(const CheckpointFiles& checkpoint, const ModelSpec& spec,
                                  const std::vector<TensorSpec>& tensors);

// A flat run of parameters in memory: `tensors` concatenated in order, each
// row-major, elements of type `dtype`.
struct ParameterPart {
  std::vector<TensorSpec> tensors;
  DType dtype = DTYPE_UNSPECIFIED;
  const void* data = nullptr;
};

// Writes every tensor of `parts` to `path` (one file) under its Hugging Face
// name (models/model_tensors.h: GPT-2's bare "h.0.…", "wte.weight", as the
// published gpt2 checkpoint and GPT2LMHeadModel.from_pretrained accept), in
// its part's dtype, with `metadata` plus "format": "pt" (what Hugging Face
// transformers expects, always) and "zosched.model": spec.name() (unless
// `metadata` sets it). When `spec` ties its head, a part's "lm_head.weight" is not
// written (as save_pretrained drops tied copies): loading makes it the token
// embedding again. A file written here loads back with LoadModelParameters.
//
// Errors: InvalidArgument for a duplicate name or a part with an unsupported
// dtype or null data; WriteSafetensors' errors.
absl::Status SaveModelParameters(const std::string& path, const ModelSpec& spec,
                                 const std::vector<ParameterPart>& parts,
                                 const std::map<std::string, std::string>& metadata);

}  // namespace zosched
