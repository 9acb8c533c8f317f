//===- FileIO.h - Durable writes and ranged reads ---------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// POSIX file helpers of the checkpoint library: a checkpoint is committed
// by write, fsync, rename and an fsync of the directory, in that order, so
// that after a crash a directory either has its index or is ignored.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_RT_LIB_CKPT_FILEIO_H
#define PIPER_RT_LIB_CKPT_FILEIO_H

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace piper::ckpt::io {

inline std::string join(const std::string &dir, const std::string &file) {
  if (dir.empty() || (!file.empty() && file[0] == '/'))
    return file;
  return dir.back() == '/' ? dir + file : dir + "/" + file;
}

inline std::string lastError() { return std::strerror(errno); }

/// Writes all `bytes` (retrying short writes).
inline bool writeAll(int fd, const void *data, size_t bytes) {
  const char *p = static_cast<const char *>(data);
  while (bytes > 0) {
    ssize_t n = ::write(fd, p, bytes);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

/// Reads `bytes` at `offset`; the count actually read (short at EOF), or -1.
inline ssize_t readAt(int fd, void *data, size_t bytes, int64_t offset) {
  char *p = static_cast<char *>(data);
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = ::pread(fd, p + done, bytes - done,
                        static_cast<off_t>(offset + int64_t(done)));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -1;
    if (n == 0)
      break;
    done += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

/// fsync of a directory: makes the renames and creations in it durable.
inline bool syncDir(const std::string &dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0)
    return false;
  bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

/// Creates `dir` if it does not exist.
inline bool makeDir(const std::string &dir) {
  return ::mkdir(dir.c_str(), 0777) == 0 || errno == EEXIST;
}

/// Writes `text` to `path` durably: `path`.tmp, fsync, rename, fsync of the
/// directory.
bool writeFileAtomic(const std::string &dir, const std::string &name,
                     const std::string &text, std::string &error);

} // namespace piper::ckpt::io

#endif // PIPER_RT_LIB_CKPT_FILEIO_H
