//===- Params.h - Parameters in and out of a run ----------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Parameters start exactly as the interpreter starts them (Init.h: pure
// functions of seed, name and element), each device taking what it holds of
// them; --params-out gathers them back, whole, on rank 0. Both directions ask
// the manifest's layout (plan_manifest.h), so they cannot disagree.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TOOLS_PIPER_RUN_PARAMS_H
#define PIPER_TOOLS_PIPER_RUN_PARAMS_H

#include "HostTensor.h"

#include "piper/Interpreter/ParamsFile.h"

#include <string>

namespace piper::run {

/// Fills this device's (at `coords`) part of every parameter in `args`
/// (indexed by argument), from `file` (--params-in) when given, else from
/// its initialiser; false with a message if one cannot be initialised.
bool initParameters(const plan::Manifest &manifest, const plan::Coords &coords,
                    uint64_t seed, const ref::ParamsFile *file,
                    std::vector<HostTensor> &args, std::string &error);

/// piper-interp --params-out's text of every parameter: its name, then its
/// values, one line each. Each parameter comes from the lowest rank whose
/// role reads it (and from one device per chunk or part of its group),
/// moved to rank 0 through `session` (null: one device); only rank 0's text
/// is complete.
bool gatherParameters(const plan::Manifest &manifest,
                      const std::vector<const plan::Role *> &roleOf, int rank,
                      std::vector<HostTensor> &args, piper_plan_session session,
                      std::string &text, std::string &error);

} // namespace piper::run

#endif // PIPER_TOOLS_PIPER_RUN_PARAMS_H
