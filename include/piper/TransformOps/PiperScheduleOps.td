//===- PiperScheduleOps.td - transform.piper scheduling ops -*- tablegen -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TRANSFORMOPS_PIPERSCHEDULEOPS_TD
#define PIPER_TRANSFORMOPS_PIPERSCHEDULEOPS_TD

#endif // PIPER_TRANSFORMOPS_PIPERSCHEDULEOPS_TD
