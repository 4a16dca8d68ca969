#include "runtime/calibration/timing_device.h"

#include <cstdint>
#include <string>
#include <vector>

#include "base/status_macros.h"
#include "runtime/host_store_layout.h"
#include "runtime/model_state.h"
#include "schedule/cluster_lookup.h"
#include "schedule/training_settings.h"

namespace zosched {

absl::StatusOr<TimingDevice> MakeTimingDevice(const Schedule& s, int device, int threads) {
  std::vector<int32_t> words(s.training().num_label_words());
  for (size_t k = 0; k < words.size(); ++k) words[k] = 10 + static_cast<int32_t>(k);
  const std::string& host_name =
      FindDevice(s.cluster(), s.devices(device).cluster_device())->host();
  TimingDevice d;
  ASSIGN_OR_RETURN(d.host, NodeSharedMemory::Allocate(LayOutHostStore(s, host_name).bytes));
  ASSIGN_OR_RETURN(d.backend, CpuBackend::Create(s, device, words, d.host.get(), nullptr, threads));
  ASSIGN_OR_RETURN(const std::vector<StoredPart> parts, StoredParts(s, device, *d.backend));
  RETURN_IF_ERROR(InitialiseParts(parts, kTimingInitSeed));
  RETURN_IF_ERROR(d.backend->PushPersistent());
  // A pending update in every direction, so that the UPDATE ops do their work.
  std::vector<ZoState> pending(DirectionsOf(s.training()));
  for (size_t i = 0; i < pending.size(); ++i) pending[i] = {12345 + i, 0.5f, 1e-6f};
  d.backend->set_pending(pending);
  return d;
}

}  // namespace zosched
