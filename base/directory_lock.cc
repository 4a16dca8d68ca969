#include "base/directory_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"

namespace zosched {

absl::StatusOr<DirectoryLock> DirectoryLock::Acquire(const std::string& path,
                                                     const std::string& what) {
  const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) {
    return absl::ErrnoToStatus(errno, absl::StrFormat("cannot open %s (%s) to lock it", path, what));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    close(fd);
    if (error == EWOULDBLOCK) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s (%s) is in use by another process (another run is writing there): choose another "
          "%s, or wait for that run to end",
          path, what, what));
    }
    return absl::ErrnoToStatus(error, absl::StrFormat("cannot lock %s (%s)", path, what));
  }
  return DirectoryLock(fd);
}

DirectoryLock& DirectoryLock::operator=(DirectoryLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace zosched
