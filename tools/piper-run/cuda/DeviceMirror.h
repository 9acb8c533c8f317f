//===- DeviceMirror.h - Device copies of a GPU plan's step tensors -*- C++
//-*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper-run-cuda only. A GPU plan's entry takes device memory, while the
// driver keeps every argument and result on the host (initialisation, data,
// checkpoints, --params-out work there unchanged). So each step copies the
// role's inputs to device buffers (allocated once per tensor from the
// session's caching allocator), passes descriptors of those, and copies the
// outputs back after the step has finished. Simple and correct; the price
// is a host round trip of the parameters per step, which a device-resident
// parameter store would remove (docs/GPU-runtime.md, "Not yet").
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TOOLS_PIPER_RUN_DEVICEMIRROR_H
#define PIPER_TOOLS_PIPER_RUN_DEVICEMIRROR_H

#include "../HostTensor.h"

#include <string>

namespace piper::run {

/// The descriptor of `t`'s device copy, filled from the host when `upload`.
/// Null with `error` set when the device has no memory or the copy failed.
void *deviceDescriptor(piper_plan_session session, HostTensor &t, bool upload,
                       std::string &error);
/// Copies `t`'s device copy back to the host.
bool downloadTensor(piper_plan_session session, HostTensor &t,
                    std::string &error);

} // namespace piper::run

#endif // PIPER_TOOLS_PIPER_RUN_DEVICEMIRROR_H
