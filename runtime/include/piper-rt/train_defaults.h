/*===- train_defaults.h - Every tool's optimizer defaults ---------*- C -*-===*\
|*                                                                            *|
|* Part of the Piper project, under the Apache License v2.0 with LLVM         *|
|* Exceptions. See LICENSE for license information.                           *|
|* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * The one source of the optimizer defaults of piper-interp, piper-compile
 * (and --piper-optimizer) and piper-run (docs/Training.md). Macros, so that
 * TableGen'd pass options can use them without bringing a C++ namespace into
 * every file that includes the passes; piper-rt/train.h names them as
 * constants for C++ code.
 */

#ifndef PIPER_RT_TRAIN_DEFAULTS_H
#define PIPER_RT_TRAIN_DEFAULTS_H

#define PIPER_TRAIN_DEFAULT_OPTIMIZER "adamw"
#define PIPER_TRAIN_DEFAULT_LR 1e-3
#define PIPER_TRAIN_DEFAULT_BETA1 0.9
#define PIPER_TRAIN_DEFAULT_BETA2 0.999
#define PIPER_TRAIN_DEFAULT_EPS 1e-8
#define PIPER_TRAIN_DEFAULT_MOMENTUM 0.0
/* PyTorch's weight decay per optimizer. */
#define PIPER_TRAIN_DEFAULT_ADAMW_WEIGHT_DECAY 1e-2
#define PIPER_TRAIN_DEFAULT_SGD_WEIGHT_DECAY 0.0
/* Parameters without weight decay: biases and norm gains. */
#define PIPER_TRAIN_DEFAULT_NO_DECAY "rank<2"

#endif /* PIPER_RT_TRAIN_DEFAULTS_H */
