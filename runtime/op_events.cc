#include "runtime/op_events.h"

namespace zosched {

void OpEvents::Done(int op, int64_t step) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_step_[op] = step;
  }
  cv_.notify_all();
}

bool OpEvents::WaitFor(int op, int64_t step) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return aborted_ || done_step_[op] >= step; });
  return !aborted_;
}

void OpEvents::Abort() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    aborted_ = true;
  }
  cv_.notify_all();
}

bool OpEvents::aborted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return aborted_;
}

}  // namespace zosched
