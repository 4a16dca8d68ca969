#include "runtime/checkpoint/checkpoint_files.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <functional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "nlohmann/json.hpp"

namespace zosched {
namespace {

using Json = nlohmann::json;

// An index lists one line per tensor: even a model of thousands of tensors
// has an index of a few hundred kB.
constexpr int64_t kMaxIndexBytes = 100'000'000;

// `name` in directory `dir`.
std::string InDirectory(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  return absl::EndsWith(dir, "/") ? dir + name : absl::StrCat(dir, "/", name);
}

// The directory holding the file at `path` ("." for a bare name).
std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The names of the .safetensors files in directory `dir`, sorted.
std::vector<std::string> SafetensorsIn(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (const dirent* entry = readdir(d)) {
    if (absl::EndsWith(entry->d_name, ".safetensors")) names.push_back(entry->d_name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

absl::StatusOr<CheckpointFiles> CheckpointFiles::Open(const std::string& path) {
  CheckpointFiles checkpoint;
  checkpoint.path_ = path;
  std::string file = path;
  if (IsDirectory(path)) {
    file = InDirectory(path, kSingleFileName);
    if (!Exists(file)) {
      const std::string index = InDirectory(path, kIndexFileName);
      if (!Exists(index)) {
        std::vector<std::string> held = SafetensorsIn(path);
        if (held.size() > 4) {
          held.resize(4);
          held.push_back("...");
        }
        return absl::NotFoundError(absl::StrCat(
            path, " is a directory holding neither ", kSingleFileName, " nor ", kIndexFileName,
            "; expected a .safetensors file, a Hugging Face checkpoint directory or its index",
            held.empty() ? " (PyTorch .bin checkpoints are not read: save the model with "
                           "safe_serialization)"
                         : absl::StrCat(" (it holds ", absl::StrJoin(held, ", "),
                                        ": pass the file by its path)")));
      }
      RETURN_IF_ERROR(checkpoint.OpenIndex(index));
      return checkpoint;
    }
  } else if (absl::EndsWith(path, ".json")) {
    RETURN_IF_ERROR(checkpoint.OpenIndex(path));
    return checkpoint;
  }
  ASSIGN_OR_RETURN(SafetensorsFile single, ReadSafetensors(file));
  checkpoint.files_.push_back(std::move(single));
  checkpoint.IndexTensors({});
  return checkpoint;
}

absl::Status CheckpointFiles::OpenIndex(const std::string& index) {
  std::string text;
  RETURN_IF_ERROR(ReadFileToString(index, &text, kMaxIndexBytes));
  Json json;
  try {
    json = Json::parse(text);
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(index, ": not valid JSON (a safetensors index): ", e.what()));
  }
  const auto weight_map = json.is_object() ? json.find("weight_map") : json.end();
  if (!json.is_object() || weight_map == json.end() || !weight_map->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        index, ": no \"weight_map\" object; a safetensors index maps each tensor name to "
               "the shard file holding it: {\"weight_map\": {\"TENSOR\": \"model-00001-of-"
               "00002.safetensors\", ...}}"));
  }
  if (weight_map->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(index, ": \"weight_map\" lists no tensor"));
  }
  // Shard file name -> a tensor the index maps to it (for messages).
  std::map<std::string, std::string> shards;
  for (auto it = weight_map->begin(); it != weight_map->end(); ++it) {
    const std::string shard = it->is_string() ? it->get<std::string>() : std::string();
    if (shard.empty() || absl::StrContains(shard, '/') || shard == "." || shard == "..") {
      return absl::InvalidArgumentError(absl::StrCat(
          index, ": tensor '", it.key(), "' is mapped to ",
          it->is_string() ? absl::StrCat("'", shard, "'") : std::string(it->type_name()),
          ", not the name of a shard file in the index's directory"));
    }
    shards.emplace(shard, it.key());
  }
  const std::string dir = DirectoryOf(index);
  std::map<std::string, size_t> shard_number;
  for (const auto& [shard, tensor] : shards) {
    absl::StatusOr<SafetensorsFile> file = ReadSafetensors(InDirectory(dir, shard));
    if (!file.ok()) {
      if (file.status().code() != absl::StatusCode::kNotFound) return file.status();
      return absl::NotFoundError(absl::StrCat(
          index, ": shard '", shard, "', which holds tensor '", tensor,
          "' by the index, is missing: ", file.status().message(),
          " (an incomplete download or copy of the checkpoint?)"));
    }
    shard_number[shard] = files_.size();
    files_.push_back(*std::move(file));
  }
  std::map<std::string, size_t> mapped;
  for (auto it = weight_map->begin(); it != weight_map->end(); ++it) {
    const std::string shard = it->get<std::string>();
    const size_t number = shard_number.at(shard);
    if (files_[number].Find(it.key()) == nullptr) {
      return absl::NotFoundError(absl::StrCat(
          index, ": tensor '", it.key(), "' is mapped to shard '", shard,
          "', which does not hold it (it holds ", files_[number].tensors().size(),
          " tensors): the index and the shards are not of the same checkpoint"));
    }
    mapped.emplace(it.key(), number);
  }
  IndexTensors(mapped);
  return absl::OkStatus();
}

void CheckpointFiles::IndexTensors(const std::map<std::string, size_t>& mapped) {
  for (const auto& [name, number] : mapped) by_name_.emplace(name, files_[number].Find(name));
  for (const SafetensorsFile& file : files_) {
    for (const SafetensorsTensor& t : file.tensors()) by_name_.emplace(t.name, &t);
  }
  tensors_.clear();
  for (const auto& [name, tensor] : by_name_) tensors_.push_back(tensor);
}

const SafetensorsTensor* CheckpointFiles::Find(absl::string_view name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const std::string& CheckpointFiles::PathOf(const SafetensorsTensor& tensor) const {
  for (const SafetensorsFile& file : files_) {
    const std::vector<SafetensorsTensor>& held = file.tensors();
    const std::less<const SafetensorsTensor*> before;
    if (!held.empty() && !before(&tensor, &held.front()) && !before(&held.back(), &tensor)) {
      return file.path();
    }
  }
  return path_;
}

}  // namespace zosched
