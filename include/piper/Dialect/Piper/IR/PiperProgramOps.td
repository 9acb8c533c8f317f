//===- PiperProgramOps.td - per-device programs ------------*- tablegen -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_IR_PIPERPROGRAMOPS_TD
#define PIPER_DIALECT_PIPER_IR_PIPERPROGRAMOPS_TD

#endif // PIPER_DIALECT_PIPER_IR_PIPERPROGRAMOPS_TD
