#include "runtime/checkpoint/content_hash.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_format.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace zosched {
namespace {

void AddBytes(XXH3_state_t* state, const void* bytes, uint64_t size) {
  XXH3_128bits_update(state, &size, sizeof(size));
  XXH3_128bits_update(state, bytes, size);
}

std::string Hex(XXH128_hash_t hash) {
  return absl::StrFormat("%016x%016x", hash.high64, hash.low64);
}

}  // namespace

std::string HashBytes(absl::string_view bytes) {
  return Hex(XXH3_128bits(bytes.data(), bytes.size()));
}

std::string ContentHash(const std::vector<SafetensorsTensor>& tensors) {
  std::vector<const SafetensorsTensor*> sorted;
  for (const SafetensorsTensor& t : tensors) sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(),
            [](const SafetensorsTensor* a, const SafetensorsTensor* b) { return a->name < b->name; });
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  for (const SafetensorsTensor* t : sorted) {
    AddBytes(state, t->name.data(), t->name.size());
    AddBytes(state, t->dtype_name.data(), t->dtype_name.size());
    AddBytes(state, t->shape.data(), t->shape.size() * sizeof(int64_t));
    AddBytes(state, t->bytes.data(), t->bytes.size());
  }
  const XXH128_hash_t hash = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  return Hex(hash);
}

absl::Status CheckContentHash(const SafetensorsFile& file) {
  const auto stored = file.metadata().find(kContentHashKey);
  if (stored == file.metadata().end()) {
    return absl::NotFoundError(absl::StrFormat(
        "%s has no content hash (metadata \"%s\"): it was not written by zosched", file.path(),
        kContentHashKey));
  }
  const std::string actual = ContentHash(file.tensors());
  if (actual != stored->second) {
    return absl::DataLossError(absl::StrFormat(
        "%s is corrupted: its tensors hash to %s but the file records %s (a changed bit, a "
        "cut or an edited tensor)",
        file.path(), actual, stored->second));
  }
  return absl::OkStatus();
}

}  // namespace zosched
