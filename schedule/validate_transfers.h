// The checks of the ops that move bytes between buffers, copies and
// collectives, in a schedule of either family (schedule/validate_ops.h
// steps 4 and 5 run them).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "schedule/schedule.pb.h"
#include "schedule/validate_operands.h"

namespace zosched {

// Checks the copies and collectives of the schedule `operands` checks (which
// must outlive this checker). Errors: InvalidArgument naming the op, the
// field, the value found and what was expected.
class TransferChecker {
 public:
  explicit TransferChecker(const OperandChecker& operands);

  // Returns OK if the copy `op` means what it says: src and dst set; H2D
  // from a host buffer of the device's own host into the device, D2H back,
  // DEVICE_TO_DEVICE from the device to `peer_device`; src_dtype and
  // dst_dtype the buffers' (equal for a peer copy); both holding the same
  // number of whole elements; `bytes` = elements × the device side's dtype;
  // link class set; src covered by the reads and dst by the writes.
  absl::Status CheckCopy(const Op& op) const;
  // Returns OK if the collective `op` means what it says: send and recv set,
  // on the op's device, of one dtype, sized as schedule.proto CollectiveOp
  // says for the kind and participant count; `bytes` as said there; an
  // ALL_GATHER in place where the family's gathers are; link class set;
  // every read inside send and every write inside recv (padding may be left
  // out).
  absl::Status CheckCollective(const Op& op) const;

 private:
  const OperandChecker& operands_;
  // Per device: the host of its cluster device.
  std::vector<const std::string*> device_hosts_;
};

}  // namespace zosched
