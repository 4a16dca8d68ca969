// An exclusive lock on a directory, so that two processes never write one
// output directory at once (two runs of train into one --out_dir).
//
// The lock is flock(2) on the directory itself: no lock file to leave
// behind, and the kernel releases it when the last process holding it
// ends, however it ends. Its descriptor is inherited by child processes
// (no close-on-exec), so a program that this process starts and that
// outlives it (mpirun, after a kill -9 of the launcher) keeps the
// directory locked until it ends too.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace zosched {

class DirectoryLock {
 public:
  // Locks `path` (an existing directory) without waiting. `what` names the
  // directory in errors (e.g. "--out_dir").
  // Errors: FailedPrecondition "PATH (WHAT) is in use by another process
  // ... choose another WHAT or wait for it to end" when another holds it;
  // the OS error's code, naming the path, when it cannot be opened.
  static absl::StatusOr<DirectoryLock> Acquire(const std::string& path, const std::string& what);

  DirectoryLock(DirectoryLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  DirectoryLock& operator=(DirectoryLock&& other) noexcept;
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;
  ~DirectoryLock();

 private:
  explicit DirectoryLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace zosched
