//===- plan_validate.h - A plan checked before any rank runs it --*- C++
//-*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper-run trusts nothing in a plan directory (docs/Runtime.md, "What is
// checked before the first step"):
// - validateManifest: the schema's rules a reader alone cannot see (sizes
//   that fit in memory, distinct indices, update targets of the same layout,
//   mesh sizes, entry and object names). readManifest calls it.
// - verifyRoleObject: the role's shared object has the size and checksum
//   piper-compile recorded, checked before dlopen (a truncated or corrupted
//   object would crash the loader).
// - roleSignature: the inputs and outputs the role's entry point was compiled
//   for (index, dtype, held shape); piper-compile embeds it in the object as
//   kSignatureSymbol and piper-run compares it with the manifest's, so an
//   edited plan.json cannot make the step read or write out of bounds.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_RT_PLAN_VALIDATE_H
#define PIPER_RT_PLAN_VALIDATE_H

#include "piper-rt/plan_manifest.h"

#include <cstdint>
#include <string>

namespace piper::plan {

/// Every entry point's name starts with this.
inline constexpr const char *kEntryPointPrefix = "piper_entry_";
/// The NUL-terminated signature string each plan object defines.
inline constexpr const char *kSignatureSymbol = "piper_plan_signature";
/// Elements one tensor of a plan may have (2^40: 8 TiB of f64).
inline constexpr int64_t kMaxTensorElements = int64_t(1) << 40;
/// Devices a plan's mesh may have (as the compiler's kMaxMeshDevices).
inline constexpr int64_t kMaxPlanDevices = int64_t(1) << 20;

/// Checks the rules above on a manifest the reader accepted. On failure
/// returns false with "what at plan.path" (the reader's form).
bool validateManifest(const Manifest &manifest, std::string &error);

/// 64-bit FNV-1a of `size` bytes, as 16 lower-case hex digits.
std::string checksum(const void *data, size_t size);

/// Checks `<directory>/<role.object>` against role.objectBytes and
/// role.objectChecksum. A role without them fails ("recompile the plan").
bool verifyRoleObject(const std::string &directory, const Role &role,
                      std::string &error);

/// The role's ABI as one line: entry, then each input and output as
/// index:dtype[held shape].
std::string roleSignature(const Manifest &manifest, const Role &role);

/// Where signature `compiled` (the object's) first differs from `described`
/// (the plan's), as "was compiled for input 6:f64[4,16] where the plan
/// describes 6:f32[4,16]".
std::string signatureDifference(const std::string &compiled,
                                const std::string &described);

} // namespace piper::plan

#endif // PIPER_RT_PLAN_VALIDATE_H
