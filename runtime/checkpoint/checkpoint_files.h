// A model checkpoint as Hugging Face stores it, open for reading: one
// safetensors file, or a model split into shard files that an index lists.
// Finds a tensor by its stored name whichever file holds it.
//
// A sharded checkpoint (what save_pretrained writes for a large model) is a
// directory holding the shards "model-00001-of-00003.safetensors", ... and
// "model.safetensors.index.json":
//   {"metadata": {"total_size": BYTES},
//    "weight_map": {"TENSOR NAME": "SHARD FILE NAME", ...}}
// Shard names are file names in the index's directory.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/checkpoint/safetensors.h"

namespace zosched {

// The file names Hugging Face gives a checkpoint in its directory.
inline constexpr char kSingleFileName[] = "model.safetensors";
inline constexpr char kIndexFileName[] = "model.safetensors.index.json";

class CheckpointFiles {
 public:
  // Opens the checkpoint at `path`, which is one of:
  //   a safetensors file (any name, e.g. a finished run's weights.safetensors);
  //   a checkpoint directory holding model.safetensors or, sharded,
  //     model.safetensors.index.json (model.safetensors first when both are
  //     there, as Hugging Face's from_pretrained looks);
  //   an index file (a path ending in ".json"), its shards beside it.
  // Each file is opened once and memory-mapped (ReadSafetensors); nothing
  // of the tensors' data is read here.
  //
  // A tensor the index maps to a shard is found in that shard; a tensor a
  // shard holds but the index does not list is found too (in the first
  // shard, in name order, holding it), as Hugging Face loads every tensor
  // of the shards it opens.
  //
  // Errors, each naming the file at fault:
  //   those of ReadSafetensors for the file or any shard;
  //   NotFound: a directory holding neither model.safetensors nor
  //     model.safetensors.index.json (naming the .safetensors files it
  //     holds, such as a run's weights.safetensors, to pass by path); a
  //     shard the index names missing (naming the shard and a tensor
  //     mapped to it);
  //   InvalidArgument: an index that is not valid JSON (with the parser's
  //     message), without a "weight_map" object, with a tensor mapped to
  //     something other than a file name in its directory (not a string,
  //     empty, or a path with '/'), or listing no tensor;
  //   NotFound: the index maps a tensor to a shard that does not hold it.
  static absl::StatusOr<CheckpointFiles> Open(const std::string& path);

  CheckpointFiles(CheckpointFiles&&) = default;
  CheckpointFiles& operator=(CheckpointFiles&&) = default;
  CheckpointFiles(const CheckpointFiles&) = delete;
  CheckpointFiles& operator=(const CheckpointFiles&) = delete;

  // The path Open was given.
  const std::string& path() const { return path_; }
  // The open files: the single file, or the shards in name order.
  const std::vector<SafetensorsFile>& files() const { return files_; }
  // Every tensor of the checkpoint, ordered by name, each name once. The
  // pointers stay valid while this object lives (also when it is moved).
  const std::vector<const SafetensorsTensor*>& tensors() const { return tensors_; }
  // The tensor stored as `name`, or nullptr.
  const SafetensorsTensor* Find(absl::string_view name) const;
  // The path of the file holding `tensor`, one of tensors() (or Find's).
  const std::string& PathOf(const SafetensorsTensor& tensor) const;

 private:
  CheckpointFiles() = default;
  // Opens the index at `index` (`path_` is set) and the shards it names.
  absl::Status OpenIndex(const std::string& index);
  // Fills tensors_ and by_name_ from files_: `mapped` (the index's
  // weight_map, or empty) first, then every other tensor of the files.
  void IndexTensors(const std::map<std::string, size_t>& mapped);

  std::string path_;
  std::vector<SafetensorsFile> files_;
  std::vector<const SafetensorsTensor*> tensors_;
  std::map<std::string, const SafetensorsTensor*, std::less<>> by_name_;
};

}  // namespace zosched
