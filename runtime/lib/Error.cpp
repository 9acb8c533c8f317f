//===- Error.cpp - Piper runtime status strings and last error ------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The last error lives in a fixed-size thread-local buffer rather than a
// std::string: reporting must work when allocation has just failed
// (PIPER_RT_ERROR_OUT_OF_MEMORY), and a trivially constructible thread_local
// needs no per-thread constructor or destructor.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/piper_rt.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace {

struct ErrorState {
  piper_rt_status status;
  char text[PIPER_RT_MAX_ERROR_LENGTH];
};

thread_local ErrorState lastError = {PIPER_RT_OK, {0}};

/// Longest source path kept in the location. Paths from __FILE__ can be
/// absolute and deep; keeping their tail (the part that names the file)
/// guarantees the message itself always gets most of the buffer.
constexpr size_t maxFileLength = 200;

/// Returns the length of the longest prefix of `text` that is at most `limit`
/// bytes and does not end inside a UTF-8 multi-byte sequence, so truncated
/// messages stay valid UTF-8 for log collectors.
size_t utf8PrefixLength(const char *text, size_t limit) {
  size_t length = limit;
  while (length > 0 &&
         (static_cast<unsigned char>(text[length]) & 0xC0) == 0x80)
    --length;
  return length;
}

/// Appends `text` (at most `length` bytes) to `buffer` at `*used`; the caller
/// has checked that it fits.
void append(char *buffer, size_t *used, const char *text, size_t length) {
  std::memcpy(buffer + *used, text, length);
  *used += length;
  buffer[*used] = '\0';
}

} // namespace

const char *piper_rt_status_string(piper_rt_status status) {
  // A switch rather than a table indexed by `status`: an out-of-range value
  // (garbage cast to the enum) must not read out of bounds.
  switch (status) {
  case PIPER_RT_OK:
    return "ok";
  case PIPER_RT_ERROR_INVALID_ARGUMENT:
    return "invalid argument";
  case PIPER_RT_ERROR_OUT_OF_MEMORY:
    return "out of memory";
  case PIPER_RT_ERROR_TIMEOUT:
    return "timeout";
  case PIPER_RT_ERROR_COMMUNICATION:
    return "communication error";
  case PIPER_RT_ERROR_UNAVAILABLE:
    return "unavailable";
  case PIPER_RT_ERROR_INTERNAL:
    return "internal error";
  case PIPER_RT_STATUS_MAX_ENUM:
    break;
  }
  return "unknown status";
}

piper_rt_status piper_rt_set_error(piper_rt_status code, const char *file,
                                   int line, const char *fmt, ...) {
  if (code == PIPER_RT_OK) {
    piper_rt_clear_error();
    return PIPER_RT_OK;
  }

  // Format into a scratch buffer as large as the whole result: anything
  // longer is cut below anyway.
  char message[PIPER_RT_MAX_ERROR_LENGTH] = "";
  size_t messageLength = 0;
  bool truncated = false;
  if (fmt) {
    va_list args;
    va_start(args, fmt);
    int written = std::vsnprintf(message, sizeof(message), fmt, args);
    va_end(args);
    if (written < 0) {
      std::snprintf(message, sizeof(message), "(unformattable message: %s)",
                    fmt);
      written = static_cast<int>(std::strlen(message));
    }
    messageLength = static_cast<size_t>(written);
    if (messageLength >= sizeof(message)) {
      messageLength = sizeof(message) - 1;
      truncated = true;
    }
  }

  // Build "piper-rt: <status>: " and " (at <file>:<line>)" first, then give
  // the message whatever room is left, so that truncation never loses the
  // status or the location, which are what one greps logs for. An empty
  // message gets no ": " so log lines never carry a stray double space.
  char prefix[64];
  std::snprintf(prefix, sizeof(prefix), "piper-rt: %s%s",
                piper_rt_status_string(code), messageLength ? ": " : "");

  char suffix[maxFileLength + 32] = "";
  if (file) {
    size_t fileLength = std::strlen(file);
    const char *fileEllipsis = "";
    if (fileLength > maxFileLength) {
      file += fileLength - maxFileLength;
      fileEllipsis = "...";
    }
    std::snprintf(suffix, sizeof(suffix), " (at %s%s:%d)", fileEllipsis, file,
                  line);
  }

  // The prefix (< 64 bytes) and suffix (< maxFileLength + 32) always leave
  // room for a message in the buffer.
  static_assert(PIPER_RT_MAX_ERROR_LENGTH >= 64 + maxFileLength + 32 + 64,
                "error buffer too small for status and location");
  size_t prefixLength = std::strlen(prefix);
  size_t suffixLength = std::strlen(suffix);
  size_t budget = PIPER_RT_MAX_ERROR_LENGTH - 1 - prefixLength - suffixLength;
  const char ellipsis[] = "...";
  size_t ellipsisLength = sizeof(ellipsis) - 1;
  if (messageLength > budget) {
    messageLength = budget;
    truncated = true;
  }
  if (truncated)
    messageLength = utf8PrefixLength(message, messageLength - ellipsisLength);

  ErrorState &state = lastError;
  state.status = code;
  state.text[0] = '\0';
  size_t used = 0;
  append(state.text, &used, prefix, prefixLength);
  append(state.text, &used, message, messageLength);
  if (truncated)
    append(state.text, &used, ellipsis, ellipsisLength);
  append(state.text, &used, suffix, suffixLength);
  return code;
}

const char *piper_rt_last_error(void) { return lastError.text; }

piper_rt_status piper_rt_last_status(void) { return lastError.status; }

void piper_rt_clear_error(void) {
  lastError.status = PIPER_RT_OK;
  lastError.text[0] = '\0';
}
