#include "runtime/backend_registry.h"

#include <map>
#include <utility>

#include "absl/strings/str_join.h"
#include "base/check.h"

namespace zosched {
namespace {

// By name, so that the names come out sorted. Made on first use: the
// registrars of other files may run before this file's statics.
std::map<std::string, BackendRegistration>& Registry() {
  static auto* registry = new std::map<std::string, BackendRegistration>();
  return *registry;
}

}  // namespace

void RegisterBackend(BackendRegistration registration) {
  const std::string name = registration.name;
  CHECK(Registry().emplace(name, std::move(registration)).second)
      << "backend '" << name << "' is registered twice";
}

const BackendRegistration* FindBackend(const std::string& name) {
  auto it = Registry().find(name);
  return it == Registry().end() ? nullptr : &it->second;
}

std::string BackendNames(const std::string& separator) {
  std::vector<std::string> names;
  for (const auto& [name, registration] : Registry()) names.push_back(name);
  return absl::StrJoin(names, separator);
}

std::string BackendNamesWith(bool BackendCapabilities::*capability, const std::string& separator) {
  std::vector<std::string> names;
  for (const auto& [name, registration] : Registry()) {
    if (registration.capabilities.*capability) names.push_back(name);
  }
  return absl::StrJoin(names, separator);
}

}  // namespace zosched
