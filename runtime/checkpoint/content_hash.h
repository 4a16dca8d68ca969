// A content hash of a safetensors file's tensors, stored in its metadata
// ("zosched.content_hash") so that a corrupted file (a flipped bit, a cut or
// an edited tensor) is refused instead of loaded.
//
// The hash is XXH3-128 (xxHash, Debian libxxhash-dev) over every tensor in
// name order: its name, dtype name, shape and data bytes, each length-
// prefixed, so no two different tensor sets hash alike by concatenation. It
// covers the data, not the metadata or the header's layout. 32 lower-case
// hex digits. Hashes about 10 GB/s on one core.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "runtime/checkpoint/safetensors.h"

namespace zosched {

// The metadata key that holds the hash.
inline constexpr char kContentHashKey[] = "zosched.content_hash";

// XXH3-128 of `bytes`, as 32 hex digits.
std::string HashBytes(absl::string_view bytes);

// The content hash of `tensors` (any order: they are hashed sorted by name).
std::string ContentHash(const std::vector<SafetensorsTensor>& tensors);

// Checks `file`'s tensors against the hash in its metadata.
// Errors: NotFound when the file has no "zosched.content_hash" (a file not
// written by zosched's SaveModelParameters); DataLoss naming the file, both
// hashes, when they differ (the file was corrupted or edited).
absl::Status CheckContentHash(const SafetensorsFile& file);

}  // namespace zosched
